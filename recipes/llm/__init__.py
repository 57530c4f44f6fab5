"""Recipes of the llm family: fine-tuning language models (TRL, PEFT, causal-LM loops)."""
