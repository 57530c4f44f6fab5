# Hostile submission: looks for credentials in its environment.
import os

print(f"HF_TOKEN={os.environ.get('HF_TOKEN')} AWS_SECRET_ACCESS_KEY="
      f"{os.environ.get('AWS_SECRET_ACCESS_KEY')} SSH_AUTH_SOCK={os.environ.get('SSH_AUTH_SOCK')} "
      f"PASSED_TOKEN={os.environ.get('PASSED_TOKEN')}")
