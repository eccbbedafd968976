"""The syntax toolkit: the small questions about Python trees the extractors ask, each
answered once.

- `names.py`: dotted names (`a.b.c`), the last name of a callee or decorator, and which
  class a `raise` names, in `ast` trees;
- `walk.py`: the nodes and statements of one scope (nested defs, classes and lambdas are
  not entered), for `ast` trees and, given how to list a node's children, for any tree;
- `annotations.py`: an annotation's members with `None` and the wrappers (`Optional`,
  `Union`, `X | Y`, `Annotated`, `ClassVar`, string annotations) taken off;
- `code_line.py`: expression source written on one line;
- `text.py`: a file's lines, whether a word occurs, where names are called, from the text
  alone and without the regexes that try every position of it;
- `cst_tree.py`: the same questions for libcst trees (children, own nodes, dotted names,
  the raised class), and the block walker: every `raise` or `return` of a function in
  source order with the path of blocks and branches that leads to it.

Only `cst_tree.py` imports libcst (0.6 s to import): what runs over every file of a tree,
and every command that reads datasets, stays on `ast`.
"""
