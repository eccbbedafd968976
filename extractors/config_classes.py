"""A module's config classes and what they say about each setting: fields with annotation,
default, accepted values and doc; properties that return a chain of `self`; instance
attributes set in `__init__`; Enum members. Also the module's imports, `Literal` aliases and
constant lists, which the join needs to resolve names and values across files.

Each form is one small function below; `tests/test_settings_facts.py` holds their case tables.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator, Mapping

from extractors.classes import config_kind
from extractors.facts import Rules
from extractors.settings_model import (
    ClassKind,
    ConfigClass,
    ConfigField,
    Derived,
    Import,
    Property,
    TypeRef,
    first_sentence,
)
from extractors.syntax.annotations import members, subscript_head, subscript_items
from extractors.syntax.code_line import code_on_one_line
from extractors.syntax.names import dotted, dotted_parts, last_name
from extractors.syntax.walk import own_statements

# an Enum's members are the values a setting of its type accepts
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_PROPERTY = frozenset({"property", "cached_property"})
# `Field(...)` of pydantic, `field(...)` of dataclasses, attrs' `field`/`ib`
_FIELD_CALLS = frozenset({"Field", "field", "ib", "attrib"})
# comments after a field that are tool directives, not its doc
_DIRECTIVES = ("type:", "noqa", "pragma", "pyright:", "mypy:", "fmt:", "pylint:", "isort:")
_NESTING = (ast.If, ast.Try, ast.With)  # module-level blocks whose statements still count
_TRY_STAR = getattr(ast, "TryStar", ast.Try)
_TYPE_ALIAS = getattr(ast, "TypeAlias", None)  # `type X = ...`, Python 3.12+


def segment(lines: list[str], node: ast.AST) -> str:
    """A node's source as written, on one line (ast's columns count UTF-8 bytes)."""
    first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if not (0 <= first <= last < len(lines)):
        return ast.unparse(node)
    if first == last:
        text = lines[first].encode()[start:end].decode(errors="replace")
        if not any(mark in text for mark in ("#", "\\", "  ", "\t")):
            return text  # already as code_on_one_line writes it (tokenizing is the slow part)
    else:
        head = lines[first].encode()[start:].decode(errors="replace")
        tail = lines[last].encode()[:end].decode(errors="replace")
        text = "\n".join([head, *lines[first + 1 : last], tail])
    return code_on_one_line(text)


def literal_value(node: ast.AST) -> str | None:
    """What a user types for a literal value: a string's text, a number or bool as written."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, bytes | type(None)):
        return node.value if isinstance(node.value, str) else repr(node.value)
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
        and not isinstance(node.operand.value, bool)
    ):
        return repr(-node.operand.value)
    return None


def literal_list(node: ast.AST) -> list[str] | None:
    """`["a", "b"]`, `("a", "b")`, `{"a", "b"}` -> their values; None for anything else."""
    if not isinstance(node, ast.List | ast.Tuple | ast.Set) or not node.elts:
        return None
    values = [literal_value(item) for item in node.elts]
    return values if all(v is not None for v in values) else None  # type: ignore[return-value]


# --- annotations -----------------------------------------------------------------------------


def type_ref(node: ast.AST | None, aliases: Mapping[str, list[str]] | None = None) -> TypeRef:
    """What an annotation says: its member names and Literal values, `None` and the
    wrappers taken off (`extractors/syntax/annotations.py`). A member that is neither a
    name nor a Literal counts as `?`, so the join never takes the Literal values for the
    only ones accepted. A name of one of `aliases` (the module's Literal aliases so far)
    stands for its values."""
    names: list[str] = []
    literals: list[str] = []
    known = aliases or {}
    for member in members(node) if node is not None else ():
        if member is None:
            names.append("?")
        elif isinstance(member, ast.Subscript):
            if subscript_head(member) != "Literal":
                names.append(dotted(member.value) or "?")  # a generic by its head
                continue
            for item in subscript_items(member):
                if isinstance(item, ast.Constant) and item.value is None:
                    continue
                if isinstance(item, ast.Name) and item.id in known:
                    literals.extend(known[item.id])  # `Literal[KVProducer, KVConsumer]`
                    continue
                value = literal_value(item)
                literals.append(value) if value is not None else names.append("?")
        elif (name := dotted(member)) is not None:
            if name in known:
                literals.extend(known[name])
            else:
                names.append(name)
        else:
            names.append("?")
    return TypeRef(names=list(dict.fromkeys(names)), literals=list(dict.fromkeys(literals)))


def is_class_var(node: ast.AST) -> bool:
    """`ClassVar[int]`, `typing.ClassVar`: a class constant, not a field."""
    head = node.value if isinstance(node, ast.Subscript) else node
    name = dotted(head)
    return name is not None and name.rsplit(".", 1)[-1] == "ClassVar"


# --- module level ----------------------------------------------------------------------------


def module_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module (or class) body, also those under `if`/`try`/`with` (an
    `if TYPE_CHECKING:` import counts), not entering defs or classes."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, _NESTING) or isinstance(stmt, _TRY_STAR):
            for name in ("body", "orelse", "finalbody"):
                yield from module_statements(getattr(stmt, name, None) or [])
            for handler in getattr(stmt, "handlers", ()):
                yield from module_statements(handler.body)


def imports_of(stmt: ast.stmt) -> list[Import]:
    """The names an import statement binds."""
    if isinstance(stmt, ast.Import):
        return [Import(name=alias.asname or alias.name, module=alias.name) for alias in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        return [
            Import(
                name=alias.asname or alias.name,
                module=stmt.module or "",
                level=stmt.level,
                attr=alias.name,
            )
            for alias in stmt.names
            if alias.name != "*"
        ]
    return []


def alias_of(
    stmt: ast.stmt, aliases: Mapping[str, list[str]] | None = None
) -> tuple[str, list[str]] | None:
    """`Mode = Literal["a", "b"]` (also annotated `: TypeAlias`, or `type Mode = ...`) ->
    ("Mode", ["a", "b"]); `Role = Literal[Producer, Consumer]` or `Producer | Consumer` of
    earlier `aliases` -> their values together."""
    target, value = _assigned(stmt)
    if _TYPE_ALIAS is not None and isinstance(stmt, _TYPE_ALIAS):
        target, value = dotted(stmt.name), stmt.value
    if target is None or value is None or "." in target:
        return None
    if not (isinstance(value, ast.Subscript | ast.BinOp)):
        return None
    ref = type_ref(value, aliases)
    if ref.names or not ref.literals:
        return None
    return target, ref.literals


def _assigned(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return dotted(stmt.targets[0]), stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return dotted(stmt.target), stmt.value
    return None, None


def constant_of(stmt: ast.stmt) -> tuple[str, list[str] | str] | None:
    """`CHOICES = ["a", "b"]` -> ("CHOICES", ["a", "b"]); `HELP = "text"` -> ("HELP", "text")."""
    target, value = _assigned(stmt)
    if target is None or value is None or "." in target:
        return None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return target, value.value
    values = literal_list(value)
    return (target, values) if values is not None else None


def module_facts(
    tree: ast.Module, lines: list[str], rules: Rules
) -> tuple[
    list[Import], dict[str, list[str]], dict[str, list[str]], dict[str, str], list[ConfigClass]
]:
    """(imports, Literal aliases, constant lists, constant texts, classes) of a module;
    `rules` say what makes a configuration class."""
    imports: list[Import] = []
    aliases: dict[str, list[str]] = {}
    constants: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for stmt in module_statements(tree.body):
        imports += imports_of(stmt)
        if (alias := alias_of(stmt, aliases)) is not None:
            aliases[alias[0]] = alias[1]
        elif (constant := constant_of(stmt)) is not None:
            name, value = constant
            if isinstance(value, str):
                texts[name] = value
            else:
                constants[name] = value
    return imports, aliases, constants, texts, classes_of(tree.body, lines, "", rules)


# --- classes ---------------------------------------------------------------------------------


def classes_of(
    body: list[ast.stmt], lines: list[str], prefix: str, rules: Rules
) -> list[ConfigClass]:
    """The classes of a body that hold anything the join can use, nested classes too."""
    found: list[ConfigClass] = []
    for stmt in module_statements(body):
        if isinstance(stmt, ast.ClassDef):
            qualname = prefix + stmt.name
            facts = class_facts(stmt, lines, qualname, rules)
            if (
                facts.kind != "plain"
                or facts.bases
                or facts.properties
                or facts.attributes
                or facts.derived
            ):
                found.append(facts)
            found += classes_of(stmt.body, lines, qualname + ".", rules)
    return found


def class_kind(node: ast.ClassDef, has_fields: bool, rules: Rules) -> ClassKind:
    """Why a class counts: an Enum, a configuration class by `rules` (classes.config_kind),
    else its annotated attributes, else nothing (`plain`)."""
    bases = {
        last_name(base.value if isinstance(base, ast.Subscript) else base) or ""
        for base in node.bases
    }
    if bases & _ENUM_BASES:
        return "enum"
    decorators = [last_name(d) or "" for d in node.decorator_list]
    kind = config_kind(decorators, bases, rules)
    if kind is not None:
        return kind
    return "annotated" if has_fields else "plain"


def class_facts(node: ast.ClassDef, lines: list[str], qualname: str, rules: Rules) -> ConfigClass:
    bases = []
    for base in node.bases:
        name = dotted(base.value if isinstance(base, ast.Subscript) else base)
        if name is not None and name != "object":
            bases.append(name)
    enum = class_kind(node, False, rules) == "enum"
    fields = [] if enum else fields_of(node.body, lines, section_docs(ast.get_docstring(node)))
    return ConfigClass(
        name=node.name,
        qualname=qualname,
        kind=class_kind(node, bool(fields), rules),
        bases=bases,
        fields=fields,
        properties=properties_of(node.body),
        attributes=init_attributes(node.body),
        derived=derived_attributes(node.body),
        from_keys=from_config_keys(node.body),
        members=members_of(node.body) if enum else None,
        line=node.lineno,
    )


def fields_of(
    body: list[ast.stmt], lines: list[str], sections: Mapping[str, str] | None = None
) -> list[ConfigField]:
    """Each `name: T [= default]` of a class body, with its doc (`sections`: the class
    docstring's `Args:`/`Attributes:` entries, the last resort)."""
    fields: list[ConfigField] = []
    for index, stmt in enumerate(body):
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if is_class_var(stmt.annotation):
            continue
        default, init, description = field_default(stmt.value, lines)
        following = body[index + 1] if index + 1 < len(body) else None
        doc = (
            docstring_after(following)
            or first_sentence(description)
            or trailing_comment(lines, stmt)
            or (sections or {}).get(stmt.target.id)
        )
        fields.append(
            ConfigField(
                name=stmt.target.id,
                annotation=segment(lines, stmt.annotation),
                type=type_ref(stmt.annotation),
                default=default,
                doc=doc,
                init=init,
                line=stmt.lineno,
            )
        )
    return fields


def field_default(value: ast.expr | None, lines: list[str]) -> tuple[str | None, bool, str | None]:
    """(default as source text, whether the constructor takes it, `description=`) of a
    field's value: a plain default, `Field(default=x)`/`Field(x)`, `field(default_factory=f)`
    (written `f()`), `field(init=False)`."""
    if value is None:
        return None, True, None
    if not (isinstance(value, ast.Call) and last_name(value.func) in _FIELD_CALLS):
        return segment(lines, value), True, None
    keywords = {kw.arg: kw.value for kw in value.keywords if kw.arg is not None}
    init = keywords.get("init")
    takes = not (isinstance(init, ast.Constant) and init.value is False)
    description = keywords.get("description", keywords.get("help"))
    metadata = keywords.get("metadata")
    if description is None and isinstance(metadata, ast.Dict):  # `metadata={"help": ...}`
        for key, item in zip(metadata.keys, metadata.values, strict=True):
            if isinstance(key, ast.Constant) and key.value in ("help", "description", "doc"):
                description = item
    text = _literal_text(description)
    default = keywords.get("default", value.args[0] if value.args else None)
    if isinstance(default, ast.Constant) and default.value is Ellipsis:
        default = None  # pydantic's `Field(...)`: required
    if default is not None:
        return segment(lines, default), takes, text
    factory = keywords.get("default_factory", keywords.get("factory"))
    if isinstance(factory, ast.Lambda):
        return segment(lines, factory.body), takes, text
    if factory is not None:
        return f"{segment(lines, factory)}()", takes, text
    return None, takes, text


# a docstring section that documents a class's fields, Google and NumPy style
_SECTIONS = ("args", "arguments", "attributes", "parameters", "params", "fields")
_GOOGLE_ENTRY = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^(\w+)\s*(?::\s*.*)?$")


def section_docs(docstring: str | None) -> dict[str, str]:
    """The first sentence of each entry of a class docstring's `Args:` / `Attributes:`
    sections (`name (type): text`, continued on deeper lines), and of NumPy's `Parameters`
    underlined with dashes (`name : type`, the text indented below)."""
    if not docstring:
        return {}
    found: dict[str, str] = {}
    rows = docstring.expandtabs().split("\n")
    index = 0
    while index < len(rows):
        head = rows[index].strip().lower()
        numpy = index + 1 < len(rows) and set(rows[index + 1].strip()) == {"-"}
        if head.rstrip(":") in _SECTIONS and (head.endswith(":") or numpy):
            index += 2 if numpy else 1
            index = _section(rows, index, numpy, found)
        else:
            index += 1
    return found


def _section(rows: list[str], index: int, numpy: bool, found: dict[str, str]) -> int:
    """Read one section's entries into `found`; the row after the section."""
    base: int | None = None
    name, text = None, []

    def flush() -> None:
        if name and text and name not in found:
            sentence = first_sentence(" ".join(text))
            if sentence:
                found[name] = sentence

    while index < len(rows):
        row = rows[index]
        if not row.strip():
            index += 1
            if (
                numpy
                and index < len(rows)
                and rows[index].strip()
                and not rows[index][:1].isspace()
            ):
                continue
            continue
        indent = len(row) - len(row.lstrip())
        if base is None:
            base = indent
        if indent < base or (
            not numpy
            and indent == base
            and row.strip().endswith(":")
            and row.strip().rstrip(":").lower() in _SECTIONS
        ):
            break
        if indent == base:
            entry = (_NUMPY_ENTRY if numpy else _GOOGLE_ENTRY).match(row.strip())
            if entry is None:
                break
            flush()
            name, text = entry[1].lstrip("*"), ([] if numpy else [entry[2]])
        else:
            text.append(row.strip())
        index += 1
    flush()
    return index


def _literal_text(node: ast.expr | None) -> str | None:
    """A string literal's text, also split over `+` (a help text written in pieces)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_text(node.left), _literal_text(node.right)
        return (left or "") + (right or "") or None
    return None


def docstring_after(stmt: ast.stmt | None) -> str | None:
    """The first sentence of a string statement that follows a field (vLLM's style)."""
    if (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    ):
        return first_sentence(inspect.cleandoc(stmt.value.value))
    return None


def trailing_comment(lines: list[str], stmt: ast.stmt) -> str | None:
    """`x: int = 3  # how many`: the comment after the field on its last line."""
    row = stmt.end_lineno - 1  # type: ignore[operator]
    if not 0 <= row < len(lines):
        return None
    rest = lines[row].encode()[stmt.end_col_offset :].decode(errors="replace").strip()
    if not rest.startswith("#"):
        return None
    comment = rest.lstrip("#").strip()
    if not comment or comment.startswith(_DIRECTIVES):
        return None
    return first_sentence(comment)


def properties_of(body: list[ast.stmt]) -> list[Property]:
    """Each `@property` whose returns include attribute chains of `self`."""
    found: list[Property] = []
    for stmt in body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not any(last_name(d) in _PROPERTY for d in stmt.decorator_list):
            continue
        params = stmt.args.posonlyargs + stmt.args.args
        if not params:
            continue
        receiver = params[0].arg
        chains: list[str] = []
        for inner in own_statements(stmt.body):
            if isinstance(inner, ast.Return) and inner.value is not None:
                values = [inner.value]
                if isinstance(inner.value, ast.IfExp):
                    values = [inner.value.body, inner.value.orelse]
                for value in values:
                    name = dotted(value)
                    if name is not None and name.startswith(receiver + "."):
                        chains.append("self" + name[len(receiver) :])
        if chains:
            found.append(Property(name=stmt.name, returns=list(dict.fromkeys(chains))))
    return found


def _init_parameters(body: list[ast.stmt]) -> tuple[ast.FunctionDef, list[ast.arg]] | None:
    """A class body's `__init__` and its parameters, the receiver first; None when it has
    no `__init__` or one without parameters."""
    init = next((s for s in body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    params = init.args.posonlyargs + init.args.args + init.args.kwonlyargs
    return (init, params) if params else None


def init_attributes(body: list[ast.stmt]) -> dict[str, TypeRef]:
    """`self.x = x` in `__init__` where the parameter `x` is annotated (or `self.x: T = ...`):
    x -> the type; an attribute assigned twice from different sources is left out, but not
    for a constant other than None assigned under a test after it (`if ...: self.top_k = 1`:
    a normalisation of the value passed, which later checks see when it does not apply)."""
    found = _init_parameters(body)
    if found is None:
        return {}
    init, params = found
    receiver = params[0].arg
    annotated = {p.arg: p.annotation for p in params[1:] if p.annotation is not None}
    assigned: dict[str, list[TypeRef | None]] = {}
    top = {id(stmt) for stmt in init.body}
    for stmt in own_statements(init.body):
        target, annotation = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(stmt.value, ast.Name):
                annotation = annotated.get(stmt.value.id)
        elif isinstance(stmt, ast.AnnAssign):
            target, annotation = stmt.target, stmt.annotation
        if (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == receiver
        ):
            if target.attr in assigned and id(stmt) not in top and _is_constant(stmt.value):
                continue  # a normalisation under a test, not another source
            ref = type_ref(annotation) if annotation is not None else None
            assigned.setdefault(target.attr, []).append(ref)
    return {
        name: refs[0]
        for name, refs in assigned.items()
        if refs[0] is not None and refs[0].names and all(r == refs[0] for r in refs)
    }


def derived_attributes(body: list[ast.stmt]) -> dict[str, Derived]:
    """The public attributes `__init__` sets from an attribute chain, each assigned once:

    | `__init__(self, vllm_config: VllmConfig, n)` sets | derived |
    |---|---|
    | `self.model_config = vllm_config.model_config` | `model_config`: VllmConfig, `[model_config]` |
    | `self.cfg = c = vllm_config.cache_config` | `cfg`: VllmConfig, `[cache_config]` |
    | `self.max_len = self.model_config.max_model_len` | `max_len`: itself, `[model_config, max_model_len]` |
    | `self.size = n.size` (`n` not annotated), `self._x = vllm_config.x` | nothing |
    | `self.mode = vllm_config.mode` twice, or also `self.mode = "a"` | nothing |
    """
    found = _init_parameters(body)
    if found is None:
        return {}
    init, params = found
    receiver = params[0].arg
    typed: dict[str, str] = {}
    for param in params[1:]:
        ref = type_ref(param.annotation) if param.annotation is not None else None
        if ref is not None and len(ref.names) == 1 and not ref.literals:
            typed[param.arg] = ref.names[0]
    found: dict[str, Derived | None] = {}
    for stmt in own_statements(init.body):
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == receiver
            ):
                continue
            parts = dotted_parts(stmt.value) if isinstance(stmt, ast.Assign) else None
            derived = None
            if parts is not None and len(parts) > 1:
                if parts[0] == receiver:
                    derived = Derived(attrs=parts[1:])
                elif parts[0] in typed:
                    derived = Derived(cls=typed[parts[0]], attrs=parts[1:])
            # a second assignment of any kind leaves the attribute out
            found[target.attr] = None if target.attr in found else derived
    return {
        name: derived
        for name, derived in found.items()
        if derived is not None and not name.startswith("_")
    }


def from_config_keys(body: list[ast.stmt]) -> dict[str, str]:
    """The key of the dict `from_config(cls, config)` builds the class from that each
    `__init__` parameter is read from: `weight_bits = cls.get_from_keys(config, ["bits"])`
    (or `config.get("bits")`, `config["bits"]`) and then `cls(weight_bits, ...)` give
    weight_bits -> bits (the first key of a list of alternatives). A local assigned from
    anything else as well (a constant apart) is left out."""
    method = _method(body, "from_config")
    init = _method(body, "__init__")
    if method is None or init is None:
        return {}
    method_params = [a.arg for a in [*method.args.posonlyargs, *method.args.args]]
    init_params = [a.arg for a in [*init.args.posonlyargs, *init.args.args]][1:]
    if len(method_params) < 2 or not init_params:
        return {}
    receiver, source = method_params[:2]
    keys: dict[str, str | None] = {}
    for stmt in own_statements(method.body):
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            continue
        name, key = stmt.targets[0].id, _key_read(stmt.value, source)
        if name not in keys:
            keys[name] = key
        elif key is not None or not _is_constant(stmt.value):
            keys[name] = None  # read again, or computed: not the key's value alone
    found: dict[str, str] = {}
    for call in ast.walk(method):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        if call.func.id != receiver:
            continue
        passed = [(p, a) for p, a in zip(init_params, call.args, strict=False)]
        if any(isinstance(a, ast.Starred) for a in call.args):
            passed = []
        passed += [(k.arg, k.value) for k in call.keywords if k.arg in init_params]
        for param, arg in passed:
            key = keys.get(arg.id) if isinstance(arg, ast.Name) else _key_read(arg, source)
            if key is not None:
                found.setdefault(param, key)
    return found


def _method(body: list[ast.stmt], name: str) -> ast.FunctionDef | None:
    return next((s for s in body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _key_read(value: ast.expr, source: str) -> str | None:
    """The key an expression reads from the dict named `source`: `X.get_from_keys(source,
    ["k", ...])` and its kin (a call on `source` and a list of keys), `source.get("k")`,
    `source["k"]`."""
    if isinstance(value, ast.Subscript) and _is_name(value.value, source):
        return _string(value.slice)
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "get" and _is_name(func.value, source):
        return _string(value.args[0]) if value.args else None
    if len(value.args) >= 2 and _is_name(value.args[0], source):
        options = value.args[1]
        if isinstance(options, ast.List | ast.Tuple) and options.elts:
            return _string(options.elts[0])
    return None


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _string(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _is_constant(value: ast.expr | None) -> bool:
    """A literal other than None (`1.0`, `-1`) or an UPPER_CASE name (`TOP_K_ALL`)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    if isinstance(value, ast.Constant):
        return value.value is not None
    return isinstance(value, ast.Name) and value.id.isupper()


def members_of(body: list[ast.stmt]) -> list[str] | None:
    """An Enum's members: their values when every value is a literal, else their names."""
    names: list[str] = []
    values: list[str | None] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and not target.id.startswith("_"):
                names.append(target.id)
                values.append(literal_value(stmt.value))
    if not names:
        return None
    return values if all(v is not None for v in values) else names  # type: ignore[return-value]
