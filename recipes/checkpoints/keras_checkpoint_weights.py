"""keras-checkpoint-weights: a ``ModelCheckpoint`` callback that saves a subclassed model
as HDF5.

``ModelCheckpoint("best.h5")`` saves the whole model at the end of an epoch; a Hugging Face
TF model (or any subclassed Keras model) cannot be written as HDF5, and ``fit`` fails
after the first epoch with ``NotImplementedError: Saving the model to HDF5 format requires
the model to be a Functional model or a Sequential model`` (public report
philschmid/keras-vision-transformer-huggingface#3). The message's own advice is
``save_weights``: the fix sets the callback's ``save_weights_only=True`` where the script
defines it (the call's keyword, the dict given as ``**kwargs``, a constant), so the
checkpoint holds the weights (reloaded with ``model.load_weights``). Taken when the
failing line is the ``fit`` the callback runs in; a ``model.save(...)`` on the failing
line is ``keras-save-pretrained``'s.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider

from autofix.toolkit import Example, NotApplicable, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import CallOwner, NotFollowed, Values


class KerasCheckpointWeights(PlannedEdits):
    id = "keras-checkpoint-weights"
    category = "keras-h5-subclassed-model"
    requires_words = (("ModelCheckpoint",),)
    title = "checkpoint the weights only (save_weights_only=True): HDF5 cannot hold the model"
    nothing_to_do = "no ModelCheckpoint(...) callback run by the failing fit(...)"

    examples = (
        Example(
            before=(
                "import tf_keras\n"
                "callbacks = [tf_keras.callbacks.ModelCheckpoint('best.h5')]\n"
                "model.fit(x, y, epochs=2, callbacks=callbacks)\n"
            ),
            after=(
                "import tf_keras\n"
                "callbacks = [tf_keras.callbacks.ModelCheckpoint('best.h5', "
                "save_weights_only=True)]\n"
                "model.fit(x, y, epochs=2, callbacks=callbacks)\n"
            ),
            line=3,
        ),
        Example(  # the option set False in a constant
            before=(
                "from tensorflow.keras.callbacks import ModelCheckpoint\n"
                "WEIGHTS_ONLY = False\n"
                "ckpt = ModelCheckpoint(filepath='ck/best.h5', save_weights_only=WEIGHTS_ONLY)\n"
                "model.fit(ds, epochs=3, callbacks=[ckpt])\n"
            ),
            after=(
                "from tensorflow.keras.callbacks import ModelCheckpoint\n"
                "WEIGHTS_ONLY = True\n"
                "ckpt = ModelCheckpoint(filepath='ck/best.h5', save_weights_only=WEIGHTS_ONLY)\n"
                "model.fit(ds, epochs=3, callbacks=[ckpt])\n"
            ),
            line=4,
        ),
        Example(  # the failing line is a model.save(...): not a callback's
            before=(
                "import tf_keras\n"
                "ckpt = tf_keras.callbacks.ModelCheckpoint('best.h5')\n"
                "model.fit(x, y, callbacks=[ckpt])\n"
                "model.save('model.h5')\n"
            ),
            line=4,
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        line = self.rc.diagnosis.line
        fits = [c for c in self.program.calls if isinstance(c.func, cst.Attribute)
                and c.func.attr.value == "fit" and self._spans(c, line)]
        if not fits:
            raise NotApplicable(f"the failing line {line} is no fit(...) call")
        values = Values(self)
        for call in values.calls(patterns.KERAS_MODEL_CHECKPOINT):
            try:
                CallOwner(values, call).set("save_weights_only", True,
                                            "HDF5 holds the weights of a subclassed model, "
                                            "not the model")
            except NotFollowed as declined:
                self.reason = str(declined)
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)

    def _spans(self, call: cst.Call, line: int) -> bool:
        position = self.get_metadata(PositionProvider, call)
        return not line or position.start.line <= line <= position.end.line
