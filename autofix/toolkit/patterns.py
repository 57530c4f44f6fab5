"""Qualified-name patterns of the library calls recipes match, in one place.

Each is a regular expression fully matched against a LibCST qualified name
(``QualifiedNameProvider``), so ``from transformers import Trainer as T`` and
``import transformers as tf; tf.Trainer`` match as well (``Recipe.is_qualified``).
A recipe that needs a new library call adds its pattern here, not in its own module.
"""

from __future__ import annotations

#: ``transformers.Trainer`` / ``Seq2SeqTrainer`` (also through their submodules).
TRAINER = r"transformers(\.trainer(_seq2seq)?)?\.(Seq2Seq)?Trainer"
#: ``AutoTokenizer.from_pretrained``, any ``*Tokenizer*``/``*Processor`` class.
TOKENIZER = r"transformers(\.[\w.]*)?\.\w*(Tokenizer\w*|Processor)\.from_pretrained"
#: A Hugging Face TensorFlow model built with ``from_pretrained``.
TF_MODEL = r"transformers(\.[\w.]*)?\.TF\w+\.from_pretrained"
#: A sequence-classification model (PyTorch, TF or Flax) built with ``from_pretrained``.
SEQ_CLS_MODEL = (r"transformers(\.[\w.]*)?\.(TF|Flax)?\w*ForSequenceClassification"
                 r"\.from_pretrained")
#: A model configuration of transformers: a ``*Config`` class (``BertConfig(...)``, also
#: ``.from_pretrained``) or ``AutoConfig.from_pretrained`` / ``AutoConfig.for_model``.
MODEL_CONFIG = (r"transformers(\.[\w.]*)?\."
                r"(AutoConfig\.(from_pretrained|for_model)|\w+Config(\.from_pretrained)?)")
#: ``TrainingArguments`` / ``Seq2SeqTrainingArguments``.
TRAINING_ARGS = r"transformers(\.[\w.]*)?\.(Seq2Seq)?TrainingArguments"
#: ``torch.utils.data.DataLoader``.
DATALOADER = r"torch\.utils\.data(\.dataloader)?\.DataLoader"
#: ``torch.optim.Adam`` / ``AdamW``.
TORCH_ADAM = r"torch\.optim(\.adamw?)?\.(Adam|AdamW)"
#: A ``torch.optim`` optimizer class (not a scheduler of ``torch.optim.lr_scheduler``).
TORCH_OPTIMIZER = (r"torch\.optim(\.[a-z_]+)?\.(SGD|Adam|AdamW|Adamax|Adagrad|Adadelta|RMSprop|"
                   r"NAdam|RAdam|ASGD|Rprop|SparseAdam|Adafactor)")
#: A Keras ``Adam``-family optimizer class (Keras 3, tf.keras or tf_keras).
KERAS_ADAM = r"(tf_keras|keras|tensorflow\.keras)(\.[\w.]*)?\.optimizers(\.[\w.]*)?\.Adam\w*"
#: A transformers collator that pads its batches (``DataCollatorWithPadding`` and the
#: task collators built on ``tokenizer.pad``).
PADDING_COLLATOR = (r"transformers(\.[\w.]*)?\.DataCollator(WithPadding|ForTokenClassification|"
                    r"ForSeq2Seq|ForLanguageModeling)")
#: ``DataCollatorForTokenClassification`` (pads per-token labels with -100).
TOKEN_COLLATOR = r"transformers(\.[\w.]*)?\.DataCollatorForTokenClassification"
#: A Hugging Face TensorFlow model, built from a config or with ``from_pretrained``.
TF_MODEL_ANY = r"transformers(\.[\w.]*)?\.TF\w+(\.from_pretrained)?"
#: TRL's trainer configurations (``SFTConfig``, ``DPOConfig``...: ``TrainingArguments``
#: subclasses, TRL 1.16).
TRL_CONFIG = (r"trl(\.[\w.]*)?\.(SFT|DPO|GRPO|Reward|KTO|ORPO|CPO|PPO|RLOO|OnlineDPO|BCO|GKD"
              r"|NashMD|XPO|PRM)Config")
#: TRL's trainers (``SFTTrainer``, ``DPOTrainer``...: ``Trainer`` subclasses, TRL 1.16).
TRL_TRAINER = (r"trl(\.[\w.]*)?\.(SFT|DPO|GRPO|Reward|KTO|ORPO|CPO|PPO|RLOO|OnlineDPO|BCO|GKD"
               r"|NashMD|XPO|PRM)Trainer")
#: Any trainer of transformers or TRL.
ANY_TRAINER = rf"({TRAINER}|{TRL_TRAINER})"
#: Any class a trainer takes as ``args``: transformers' arguments classes, TRL's configs.
ANY_TRAINING_ARGS = rf"({TRAINING_ARGS}|{TRL_CONFIG})"
#: TRL's ``SFTTrainer``.
SFT_TRAINER = r"trl(\.trainer(\.sft_trainer)?)?\.SFTTrainer"
#: A PEFT adapter config (``LoraConfig``, ``LoHaConfig``, ``IA3Config``...).
PEFT_CONFIG = r"peft(\.[\w.]*)?\.\w+Config"
#: ``peft.get_peft_model``.
GET_PEFT_MODEL = r"peft(\.[\w.]*)?\.get_peft_model"
#: ``PeftModel.from_pretrained`` (and its task classes, ``AutoPeftModel*``).
PEFT_FROM_PRETRAINED = r"peft(\.[\w.]*)?\.(Auto)?PeftModel\w*\.from_pretrained"
#: transformers' ``DataCollatorWithPadding`` (it pads the inputs and makes no labels).
WITH_PADDING_COLLATOR = r"transformers(\.[\w.]*)?\.DataCollatorWithPadding"
#: A scikit-learn metric whose ``y_pred`` (second positional) is class ids, not scores.
SKLEARN_LABEL_METRIC = (r"sklearn\.metrics(\._classification)?\.(accuracy_score|"
                        r"balanced_accuracy_score|f1_score|fbeta_score|precision_score|"
                        r"recall_score|precision_recall_fscore_support|jaccard_score|"
                        r"confusion_matrix|classification_report|matthews_corrcoef|"
                        r"cohen_kappa_score|hamming_loss|zero_one_loss)")
