"""An SFTConfig left to its defaults on a machine without a bf16 GPU: TRL's configs turn
bf16 on when fp16 is off (the kind of gensyn-ai/rl-swarm#299). The tiny Llama of
scripts/make_tiny_llm.py is named by $AUTOFIX_TINY_LLM."""
import os
import tempfile

from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer

folder = os.environ["AUTOFIX_TINY_LLM"]
rows = Dataset.from_list([{"prompt": f"What is {i} + {i}?", "completion": f" {2 * i}"}
                          for i in range(48)])
config = SFTConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=8,
                   learning_rate=2e-3, save_strategy="no", report_to="none")
SFTTrainer(model=AutoModelForCausalLM.from_pretrained(folder), args=config,
           train_dataset=rows, processing_class=AutoTokenizer.from_pretrained(folder)).train()
