"""Fix recipes: one module per recipe, each a LibCST codemod with its own examples."""
