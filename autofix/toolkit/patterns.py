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
#: The same, made any way: the class itself or its ``from_pretrained``.
TOKENIZER_ANY = r"transformers(\.[\w.]*)?\.\w*(Tokenizer\w*|Processor)(\.from_pretrained)?"
#: A Hugging Face TensorFlow model built with ``from_pretrained``.
TF_MODEL = r"transformers(\.[\w.]*)?\.TF\w+\.from_pretrained"
#: A sequence-classification model class (PyTorch, TF or Flax).
SEQ_CLS_CLASS = r"transformers(\.[\w.]*)?\.(TF|Flax)?\w*ForSequenceClassification"
#: A sequence-classification model built with ``from_pretrained``.
SEQ_CLS_MODEL = SEQ_CLS_CLASS + r"\.from_pretrained"
#: ... built with ``from_config``.
SEQ_CLS_FROM_CONFIG = SEQ_CLS_CLASS + r"\.from_config"
#: ... made any way but ``from_config``: the class itself or its ``from_pretrained``.
SEQ_CLS_ANY = SEQ_CLS_CLASS + r"(\.from_pretrained)?"
#: A classification head's model class: one label per sequence or per token.
CLASSIFIER_CLASS = (r"transformers(\.[\w.]*)?\.(TF|Flax)?\w*For"
                    r"(SequenceClassification|TokenClassification)")
#: ... made any way (the class, ``from_pretrained``, ``from_config``).
CLASSIFIER = CLASSIFIER_CLASS + r"(\.from_pretrained|\.from_config)?"
#: A token-classification model: the class itself or its ``from_pretrained``.
TOKEN_CLS_ANY = r"transformers(\.[\w.]*)?\.\w*ForTokenClassification(\.from_pretrained)?"
#: A model with a task head (``AutoModelForSequenceClassification``, ``BertForMaskedLM``),
#: made from a checkpoint or a config.
TASK_MODEL = r"transformers(\.[\w.]*)?\.\w*For[A-Z]\w*(\.from_pretrained|\.from_config)?"
#: A model with a task head loaded with ``from_pretrained``.
TASK_MODEL_PRETRAINED = r"transformers(\.[\w.]*)?\.\w*For\w+\.from_pretrained"
#: A transformers model (with or without a head), made any way.
ANY_MODEL = r"transformers(\.[\w.]*)?\.\w*Model\w*(\.from_pretrained|\.from_config)?"
#: A model, loaded (``.from_pretrained``) or built from a config (``BertForMaskedLM(cfg)``,
#: ``AutoModelForCausalLM.from_config(cfg)``); never a collator, processor or config class.
MODEL = (r"transformers(\.[\w.]*)?\.(?!\w*(Collator|Processor|Tokenizer|Config|Trainer))"
         r"(AutoModel\w*|\w+For\w+|\w+Model|\w+LMHeadModel)(\.from_pretrained|\.from_config)?")
#: A causal or sequence-to-sequence language model, made any way.
LM_MODEL = (r"transformers(\.[\w.]*)?\.\w*(ForCausalLM|LMHeadModel|ForSeq2SeqLM)"
            r"(\.from_pretrained|\.from_config)?")
#: A causal language model, made any way.
CAUSAL_LM_MODEL = (r"transformers(\.[\w.]*)?\.(\w*ForCausalLM|\w*LMHeadModel)"
                   r"(\.from_pretrained|\.from_config)?")
#: A model configuration of transformers: a ``*Config`` class (``BertConfig(...)``, also
#: ``.from_pretrained``) or ``AutoConfig.from_pretrained`` / ``AutoConfig.for_model``.
MODEL_CONFIG = (r"transformers(\.[\w.]*)?\."
                r"(AutoConfig\.(from_pretrained|for_model)|\w+Config(\.from_pretrained)?)")
#: ``TrainingArguments`` / ``Seq2SeqTrainingArguments`` / ``TFTrainingArguments``.
TRAINING_ARGS = r"transformers(\.[\w.]*)?\.(Seq2Seq|TF)?TrainingArguments"
#: ``Seq2SeqTrainingArguments`` alone (``predict_with_generate`` is its own).
SEQ2SEQ_TRAINING_ARGS = r"transformers(\.training_args_seq2seq)?\.Seq2SeqTrainingArguments"
#: ``HfArgumentParser``, which parses the command line into arguments dataclasses.
HF_ARGUMENT_PARSER = r"transformers(\.hf_argparser)?\.HfArgumentParser"
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
#: ``DataCollatorForLanguageModeling``.
LM_COLLATOR = r"transformers(\.[\w.]*)?\.DataCollatorForLanguageModeling"
#: The collators that pad the inputs only (or remake the labels from them).
INPUT_COLLATOR = (r"transformers(\.[\w.]*)?\."
                  r"(DataCollatorWithPadding|DataCollatorForLanguageModeling)")
#: transformers' own ``AdamW`` (removed in 4.x) or PyTorch's, which replaced it.
ADAMW = r"(transformers(\.optimization)?|torch\.optim(\.adamw)?)\.AdamW"

# -- datasets
#: ``datasets.load_dataset``.
LOAD_DATASET = r"datasets(\.[\w.]*)?\.load_dataset"
#: ``datasets.DatasetDict``.
DATASET_DICT = r"datasets(\.[\w.]*)?\.DatasetDict"

# -- torch
#: ``torch.device``.
TORCH_DEVICE = r"torch\.device"
#: ``torch.tensor`` / ``torch.as_tensor``, which take a ``dtype=``.
TENSOR_MAKER = r"torch\.(tensor|as_tensor)"
#: A floating dtype of torch (``torch.float32``, ``torch.half``...).
FLOAT_DTYPE = r"torch\.(float|float32|float64|double|half|float16|bfloat16)"
#: A legacy tensor class that makes floats (``torch.FloatTensor(...)``, ``torch.Tensor``).
FLOAT_TENSOR_CLASS = r"torch\.(Tensor|FloatTensor|DoubleTensor|HalfTensor)"
#: The contexts that turn autograd off (``torch.no_grad()``, ``torch.inference_mode()``).
NO_GRAD = r"torch(\.autograd(\.grad_mode)?)?\.(no_grad|inference_mode)"
#: ``torch.save``.
TORCH_SAVE = r"torch(\.serialization)?\.save"
#: ``torch.load``.
TORCH_LOAD = r"torch(\.serialization)?\.load"
#: ``nn.DataParallel`` / ``DistributedDataParallel``, which wrap a model.
DATA_PARALLEL = (r"torch\.nn(\.parallel(\.data_parallel|\.distributed)?)?\.(DataParallel|"
                 r"DistributedDataParallel)")
#: ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_`` (and their old names).
CLIP_GRAD = r"torch\.nn\.utils(\.clip_grad)?\.clip_grad_(norm|value)_?"
#: ``torch.nn.Linear``.
LINEAR = r"torch\.nn(\.modules\.linear)?\.Linear"
#: torch's loss modules (``nn.CrossEntropyLoss``, ``nn.MSELoss``...).
LOSS_MODULE = r"torch\.nn(\.modules\.loss)?\.\w+Loss"
#: torch's functional losses.
LOSS_FUNCTION = (r"torch\.nn\.functional\.(cross_entropy|nll_loss|mse_loss|l1_loss|"
                 r"smooth_l1_loss|binary_cross_entropy\w*|kl_div|huber_loss)")
#: The losses of class-id targets, as modules (``nn.CrossEntropyLoss``, ``nn.NLLLoss``).
CLASS_ID_LOSS_MODULE = r"torch\.nn\.(modules\.loss\.)?(CrossEntropyLoss|NLLLoss)"
#: ... and as functions (``F.cross_entropy``, ``F.nll_loss``).
CLASS_ID_LOSS_FUNCTION = r"torch\.nn\.functional\.(cross_entropy|nll_loss)"
#: Cross-entropy, as a module or a function.
CROSS_ENTROPY = (r"torch\.nn\.(modules\.loss\.)?CrossEntropyLoss|"
                 r"torch\.nn\.functional\.cross_entropy")
#: The torch losses that take class weights (modules and functions).
WEIGHTED_LOSS = (r"torch\.nn(\.modules\.loss)?\.(CrossEntropyLoss|NLLLoss|BCEWithLogitsLoss|"
                 r"BCELoss|MultiMarginLoss|MultiLabelSoftMarginLoss)"
                 r"|torch\.nn\.functional\.(cross_entropy|nll_loss|binary_cross_entropy\w*)")

# -- Keras
#: Keras' ``ModelCheckpoint`` callback (Keras 3, tf.keras or tf_keras).
KERAS_MODEL_CHECKPOINT = (r"(tf_keras|keras|tensorflow\.keras|tensorflow\.python\.keras)"
                          r"(\.[\w.]*)?\.callbacks(\.[\w.]*)?\.ModelCheckpoint")
#: A Keras loss or metric, the name last (``keras.losses.CategoricalCrossentropy``).
KERAS_LOSS_OR_METRIC = (r"(tf_keras|keras|tensorflow\.keras)(\.src)?\.(losses|metrics)"
                        r"(\.\w+)?\.(\w+)")
#: The Keras modules whose objects a tf-keras model cannot take from Keras 3.
KERAS3_PARTS = r"(optimizers|losses|callbacks|metrics)"
#: An object of those modules, imported from Keras 3 or tf.keras.
KERAS3_OBJECT = rf"(tensorflow\.keras|keras)\.{KERAS3_PARTS}"
#: A module imported from: Keras 3's or tf.keras' own (a ``from ... import`` line).
KERAS3_MODULE = rf"(tensorflow\.keras|tensorflow\.python\.keras|keras)\.{KERAS3_PARTS}(\.[\w.]+)?"

# -- the standard library, numpy, scikit-learn, TRL
#: The ``dict`` builtin.
DICT = r"(builtins\.)?dict"
#: ``os.environ``.
OS_ENVIRON = r"os\.environ"
#: ``os.environ.get`` / ``os.getenv``.
ENV_GET = r"os\.(environ\.get|getenv)"
#: The standard library's JSON writers (``json.dump`` / ``json.dumps``).
JSON_DUMP = r"json\.dumps?"
#: Anything of numpy (its functions return numpy scalars and arrays).
NUMPY_ANY = r"numpy\..*"
#: ``np.argmax``.
NUMPY_ARGMAX = r"numpy\.argmax"
#: ``torch.argmax``.
TORCH_ARGMAX = r"torch\.argmax"
#: numpy functions that take ``dtype=`` and make a new array.
NUMPY_MAKERS = (r"numpy\.(zeros|ones|empty|full|array|asarray|arange|zeros_like|ones_like|"
                r"full_like|empty_like|stack|concatenate|vstack|hstack|linspace|eye)")
#: numpy's random draws: float64, no ``dtype=`` (cast with ``.astype``).
NUMPY_DRAWS = r"numpy\.random\.\w+"
#: A numpy random generator (``np.random.default_rng(0)``, ``RandomState``): its draws
#: are float64.
NUMPY_GENERATOR = r"numpy\.random\.(default_rng|RandomState|Generator)"
#: ``np.expand_dims``.
NUMPY_EXPAND_DIMS = r"numpy\.expand_dims"
#: numpy functions whose first argument is the data they convert or join.
NUMPY_CONVERTERS = r"numpy\.(array|asarray|stack|concatenate|vstack|hstack|expand_dims)"
#: torch functions that take ``dtype=`` and make a new tensor.
TORCH_MAKERS = (r"torch\.(tensor|as_tensor|zeros|ones|full|empty|arange|randn|rand|randint|"
                r"zeros_like|ones_like|full_like|empty_like|linspace|eye|stack|cat)")
#: torch's legacy typed constructors (``torch.FloatTensor(x)``).
TORCH_LEGACY = r"torch\.(Tensor|FloatTensor|DoubleTensor|HalfTensor|LongTensor|IntTensor)"
#: ``torch.device(...)``.
TORCH_DEVICE = r"torch\.device"
#: ``torch.from_numpy``: where a numpy array becomes a tensor (its dtype kept).
TORCH_FROM_NUMPY = r"torch\.from_numpy"
#: The torch constructors that copy their data's values into a new leaf tensor (no graph
#: of the tensors they were given).
TORCH_COPYING = r"torch\.(tensor|as_tensor|Tensor|FloatTensor|DoubleTensor)"
#: torch functions whose first argument is the data they convert or join.
TORCH_CONVERTERS = (r"torch\.(tensor|as_tensor|from_numpy|Tensor|LongTensor|FloatTensor|"
                    r"DoubleTensor|IntTensor|HalfTensor|stack|cat)")
#: ``torch.utils.data.TensorDataset`` (item ``i`` holds row ``i`` of each tensor).
TENSOR_DATASET = r"torch\.utils\.data(\.dataset)?\.TensorDataset"
#: ``datasets.Dataset.from_dict``.
DATASET_FROM_DICT = r"datasets(\.[\w.]*)?\.Dataset\.from_dict"
#: The builtins ``list`` / ``tuple`` (their first argument is the data they copy).
LIST_OR_TUPLE = r"builtins\.(list|tuple)"
#: Iteration helpers whose items are their argument's (``iter``, ``list``, ``sorted``,
#: tqdm's progress bars).
ITERATION_WRAPPERS = r"builtins\.(iter|list|sorted)|tqdm(\.(auto|notebook|std))?\.tqdm"
#: ``enumerate`` and ``zip``.
ENUMERATE = r"builtins\.enumerate"
ZIP = r"builtins\.zip"
#: scikit-learn's metrics that average over classes (``average=``).
SKLEARN_AVERAGED_METRIC = (r"sklearn\.metrics(\._classification)?\.(f1_score|precision_score|"
                           r"recall_score|fbeta_score|jaccard_score|"
                           r"precision_recall_fscore_support)")
#: Anything of TRL.
TRL_ANY = r"trl(\.[\w.]*)?\.\w+"
#: Anything of transformers.
TRANSFORMERS_ANY = r"transformers(\..*)?"
#: Anything of pandas.
PANDAS_ANY = r"pandas(\..*)?"
#: ``pandas.factorize``.
FACTORIZE = r"pandas(\.core\.algorithms)?\.factorize"
#: scikit-learn's ``LabelEncoder``.
LABEL_ENCODER = r"sklearn\.preprocessing(\._label)?\.LabelEncoder"
#: A Hugging Face TensorFlow model, built from a config (``TFBertModel(config)``,
#: ``from_config``) or with ``from_pretrained``.
TF_MODEL_ANY = r"transformers(\.[\w.]*)?\.TF\w+(\.from_pretrained|\.from_config)?"
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
#: A probability layer as a function: ``torch.softmax`` / ``F.softmax`` / ``torch.special``'s.
SOFTMAX = r"torch(\.nn\.functional|\.special)?\.softmax"
#: ... and its sigmoid forms (``torch.sigmoid``, ``F.sigmoid``, ``torch.special.expit``).
SIGMOID = r"torch(\.nn\.functional)?\.sigmoid|torch\.special\.expit"
#: The layer classes ``nn.Softmax`` / ``nn.Sigmoid`` (also through their submodule).
SOFTMAX_LAYER = r"torch\.nn(\.modules(\.activation)?)?\.Softmax"
SIGMOID_LAYER = r"torch\.nn(\.modules(\.activation)?)?\.Sigmoid"
#: ``nn.Sequential``.
SEQUENTIAL = r"torch\.nn(\.modules(\.container)?)?\.Sequential"
#: The losses that take logits or log-probabilities, as functions of ``torch.nn.functional``
#: and as ``nn`` loss classes.
LOGIT_LOSS_FUNCTION = (r"torch\.nn\.functional\.(cross_entropy|nll_loss|"
                       r"binary_cross_entropy_with_logits)")
LOGIT_LOSS_CLASS = r"torch\.nn(\.modules(\.loss)?)?\.(CrossEntropyLoss|NLLLoss|BCEWithLogitsLoss)"
