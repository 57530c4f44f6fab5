"""added-tokens-not-resized: tokens added to the tokenizer, the model's embeddings never
resized.

``tokenizer.add_tokens(...)`` / ``add_special_tokens(...)`` give the new tokens ids at and
above the checkpoint's vocabulary size; the model's input embedding matrix still has the
old number of rows, so the lookup raises ``IndexError: index out of range in self`` in
``torch.nn.functional.embedding`` (transformers 5.24 and 4.57.6, measured; on a GPU a
device-side assert). The transformers documentation of ``add_tokens``: "resize the
token embedding matrix of the model so that its embedding matrix matches the
tokenizer", ``model.resize_token_embeddings(len(tokenizer))``. The call is inserted after
both the tokens are added and the model is loaded, in a scope where both names resolve.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ParentNodeProvider, PositionProvider, ScopeProvider

from autofix.toolkit import Example, NotApplicable, Recipe, find, patterns

_ADD = m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("add_tokens") |
                               m.Name("add_special_tokens")))

_LOOP = (
    "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
    "tokenizer = AutoTokenizer.from_pretrained(CKPT)\n"
    "tokenizer.add_special_tokens({'additional_special_tokens': ['<e1>', '</e1>']})\n"
    "model = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3)\n"
)


class ResizeEmbeddings(Recipe):
    id = "resize-token-embeddings"
    category = "added-tokens-not-resized"
    requires_imports = ("transformers",)
    title = "resize the model's token embeddings to the tokenizer after adding tokens"
    nothing_to_do = "no tokenizer.add_tokens/add_special_tokens call with a model loaded or built"
    METADATA_DEPENDENCIES = (  # type: ignore[assignment]  # Recipe narrows the type
        *Recipe.METADATA_DEPENDENCIES, ScopeProvider, ParentNodeProvider)

    examples = (
        Example(
            before=_LOOP + "model.train()\n",
            after=_LOOP + "model.resize_token_embeddings(len(tokenizer))\nmodel.train()\n",
        ),
        Example(  # model first, tokens added later, in a function, other names
            before=("import transformers\n"
                    "def setup(path):\n"
                    "    net = transformers.BertForMaskedLM.from_pretrained(path)\n"
                    "    tok = transformers.BertTokenizerFast.from_pretrained(path)\n"
                    "    n = tok.add_tokens(['[NEW]'])\n"
                    "    return net, tok\n"),
            after=("import transformers\n"
                   "def setup(path):\n"
                   "    net = transformers.BertForMaskedLM.from_pretrained(path)\n"
                   "    tok = transformers.BertTokenizerFast.from_pretrained(path)\n"
                   "    n = tok.add_tokens(['[NEW]'])\n"
                   "    net.resize_token_embeddings(len(tok))\n"
                   "    return net, tok\n"),
        ),
        Example(  # tokens added in a helper whose tokenizer name is not visible at the model
            before=("from transformers import AutoModel, AutoTokenizer\n"
                    "def load_tok():\n"
                    "    t = AutoTokenizer.from_pretrained('c')\n"
                    "    t.add_tokens(['x'])\n"
                    "    return t\n"
                    "def main():\n"
                    "    model = AutoModel.from_pretrained('c')\n"),
        ),
        Example(  # a model built from a config, tokens added after it (a collator is no model)
            before=("from transformers import BertConfig, BertForSequenceClassification, "
                    "DataCollatorForLanguageModeling\n"
                    "tok = load_tokenizer()\n"
                    "model = BertForSequenceClassification(BertConfig(vocab_size=len(tok)))\n"
                    "tok.add_tokens(['<urgent>'])\n"
                    "collator = DataCollatorForLanguageModeling(tok)\n"),
            after=("from transformers import BertConfig, BertForSequenceClassification, "
                   "DataCollatorForLanguageModeling\n"
                   "tok = load_tokenizer()\n"
                   "model = BertForSequenceClassification(BertConfig(vocab_size=len(tok)))\n"
                   "tok.add_tokens(['<urgent>'])\n"
                   "model.resize_token_embeddings(len(tok))\n"
                   "collator = DataCollatorForLanguageModeling(tok)\n"),
        ),
        Example(  # already resized
            before=_LOOP + "model.resize_token_embeddings(len(tokenizer))\n",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if find(tree, m.Attribute(attr=m.Name("resize_token_embeddings"))):
            raise NotApplicable("the script already calls resize_token_embeddings")
        return super().transform_module_impl(tree)

    def visit_Module(self, node: cst.Module) -> None:
        """Find the add-tokens statement and the model assignment, and where to insert."""
        self.insert_after: cst.CSTNode | None = None
        self.line = ""
        adds = [(self.statement(c), cst.ensure_type(cst.ensure_type(c, cst.Call).func,
                                                    cst.Attribute))
                for c in m.findall(node, _ADD)]
        models = [(self.statement(a), cst.ensure_type(cst.ensure_type(a, cst.Assign)
                                                      .targets[0].target, cst.Name).value)
                  for a in m.findall(node, m.Assign(targets=[m.AssignTarget(m.Name())],
                                                    value=m.Call()))
                  if self.is_qualified(cst.ensure_type(cst.ensure_type(a, cst.Assign).value,
                                                       cst.Call).func, patterns.MODEL)]
        for add_stmt, func in adds:
            tokenizer = cst.ensure_type(func.value, cst.Name).value
            for model_stmt, model in models:
                later = max((add_stmt, model_stmt), key=self.line_of)
                if self.resolves(later, tokenizer) and self.resolves(later, model) \
                        and self.same_object(later, tokenizer, add_stmt) \
                        and self.same_object(later, model, model_stmt):
                    self.insert_after = later
                    self.line = f"{model}.resize_token_embeddings(len({tokenizer}))"
        if self.insert_after is None:
            self.reason = ("no place where both the tokenizer that got the tokens and the "
                           "model are in scope")

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The simple statement line holding ``node``."""
        while not isinstance(node, cst.SimpleStatementLine):
            node = self.get_metadata(ParentNodeProvider, node)
        return node

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def resolves(self, where: cst.CSTNode, name: str) -> bool:
        scope = self.get_metadata(ScopeProvider, where, None)
        return scope is not None and name in scope

    def same_object(self, where: cst.CSTNode, name: str, origin: cst.CSTNode) -> bool:
        """``name`` at ``where`` is the name used at ``origin`` (same scope)."""
        return self.get_metadata(ScopeProvider, where, None) is \
            self.get_metadata(ScopeProvider, origin, None)

    def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if original_node is not self.insert_after:
            return updated_node
        self.changed(original_node, f"{self.line} after the tokens are added and the model "
                                    "is loaded")
        return cst.FlattenSentinel([updated_node, cst.parse_statement(self.line + "\n")])
