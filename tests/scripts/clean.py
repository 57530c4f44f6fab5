"""A script that works: nothing to fix."""
print("training... loss 0.42")
