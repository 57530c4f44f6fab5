"""One source parsed once for every recipe tried on it, and whole-tree searches answered
from one index per tree."""

from __future__ import annotations

import ast
import re
import warnings
from collections import OrderedDict, defaultdict
from functools import cached_property, lru_cache

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper

_WORD = re.compile(r"\w+")


class ParsedSource:
    """One source parsed once for every recipe tried on it: its LibCST module, one shared
    ``MetadataWrapper`` (it resolves each metadata provider once and caches it; a recipe
    resolving its own cost 0.3-3 s per file, measured on transformers' modules), and the
    facts :meth:`Recipe.precheck` reads (words, imported top-level modules).

    ``module`` is ``None`` and ``error`` says why when LibCST cannot parse ``source``.
    CST nodes are immutable, so recipes share the tree and its metadata safely.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.error = ""
        self.module: cst.Module | None = None
        try:
            self.module = cst.parse_module(source)
        except cst.ParserSyntaxError as exc:
            self.error = exc.message
        #: Why LibCST could not parse new code in this module's style ("" when it can):
        #: its indent or newline holds characters its parser config rejects (a form feed,
        #: found by the hypothesmith benchmark), which crashes ``AddImportsVisitor``.
        self.unwritable = ""
        if self.module is not None:
            try:
                self.module.config_for_parsing  # noqa: B018 - the validation is the point
            except ValueError as exc:
                self.unwritable = str(exc)

    @cached_property
    def wrapper(self) -> MetadataWrapper:
        """The shared wrapper (its ``module`` is a copy of :attr:`module`, as LibCST makes)."""
        assert self.module is not None, "no wrapper for a source that does not parse"
        return MetadataWrapper(self.module)

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word (``\\w+``) of the source, comments and strings included: a superset
        of its identifiers, attribute names and keywords."""
        return frozenset(_WORD.findall(self.source))

    @cached_property
    def imports(self) -> frozenset[str] | None:
        """Top-level modules the source imports absolutely (``import a.b``, ``from a.b
        import c`` give ``a``), anywhere in the file; ``None`` when Python's own parser
        rejects the source (then no recipe is declined on imports)."""
        try:
            with warnings.catch_warnings():  # e.g. SyntaxWarning on odd literals
                warnings.simplefilter("ignore")
                tree = ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
        return frozenset(found)


@lru_cache(maxsize=4)
def parse_source(source: str) -> ParsedSource:
    """The :class:`ParsedSource` of ``source``, shared by the recipes tried on it in turn
    (the engine tries each candidate recipe on the same program source)."""
    return ParsedSource(source)


class _Index(cst.CSTVisitor):
    """Every node of a tree by type, in source order (one plain walk)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_type: defaultdict[type[cst.CSTNode], list[cst.CSTNode]] = defaultdict(list)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.by_type[type(node)].append(node)
        return True


#: id(tree) -> (tree, its index); the tree is kept so its id is not reused while cached
_INDEXES: OrderedDict[int, tuple[cst.CSTNode, _Index]] = OrderedDict()


def find(tree: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """What ``libcst.matchers.findall(tree, matcher)`` finds (same nodes, same order), for
    the whole-tree searches every recipe makes: a matcher on one node type (``m.Call(...)``,
    no metadata matchers) is answered from an index of ``tree`` built by one plain walk and
    kept for the last 8 trees, so the recipes tried on one source share it. Any other
    matcher goes to ``findall``. Why: each ``findall`` walks the whole tree through LibCST's
    matcher layer; on 20 transformers modules these walks took a quarter of the time."""
    kind = getattr(cst, type(matcher).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, cst.CSTNode)):
        return list(m.findall(tree, matcher))
    entry = _INDEXES.get(id(tree))
    if entry is None or entry[0] is not tree:
        index = _Index()
        tree.visit(index)
        entry = _INDEXES[id(tree)] = (tree, index)
        while len(_INDEXES) > 8:
            _INDEXES.popitem(last=False)
    _INDEXES.move_to_end(id(tree))
    return [n for n in entry[1].by_type.get(kind, ()) if m.matches(n, matcher)]


