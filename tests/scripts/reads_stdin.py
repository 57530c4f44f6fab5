"""Asks a question on standard input, as some course scripts do."""
answer = input("How many epochs? ")
print("epochs:", answer)
