"""A script with a syntax error on line 4."""
import os

def main(:
    print(os.getcwd())
