"""Source-level fixes applied to datamodel-code-generator's output, all driven by the AST.

1. ``name_combinations``: where a definition mixes its own properties with a union whose arms
   are themselves unions (``elicitation/create``: mode by scope), the generator invents
   ``Parent1``, ``Parent2``... for the combinations. Each is renamed after what it combines:
   its one distinguishing base class (``…FormModeSession`` → ``ParentSession``), or
   ``ParentBase`` for the class holding the fields shared by all combinations. Anything still
   numbered afterwards is an error, never silently kept.
2. ``dedupe_definitions``: a branch class re-emitted verbatim in a second module is replaced
   there by an import from the module that owns it, so each class exists once.
3. ``defer_schema_builds``: every model gets ``defer_build=True``. Building a validator is a
   large part of class creation; deferring it to first use cuts the import cost of a module
   (``initialize``'s models: ~19 → ~13 ms here), and nested classes validated only through
   their parent are never built on their own.
4. ``reject_known_tags``: the catch-all arm of an open union (``"other"``: any tag value
   except the known ones) gets a validator refusing the known values. Without it a broken
   known variant (``{"action": "accept"}`` without its content) would parse as "other"
   instead of failing, because the generator drops the schema's ``not``.
5. ``aliases_to_root_models``: a method's params/result that is a union would otherwise be a
   ``TypeAliasType``; it becomes a ``RootModel`` so that every params/result/update/error name
   in the index is a pydantic model class with ``model_validate``/``model_dump``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from acp_schema.codegen_prepare import BranchNames

_NUMBERED = re.compile(r"^(?P<stem>.*\D)(?P<number>\d+)$")
_PLAIN_BASES = {"BaseModel", "RootModel", "StrEnum", "Enum", "IntEnum"}


class PostprocessError(ValueError):
    """The generator's output has a shape these fixes do not know how to name."""


@dataclass(frozen=True)
class Definition:
    """A top-level class or type alias in one generated module."""

    name: str
    module: str
    kind: str  # "class" | "alias"
    bases: tuple[str, ...]
    start: int  # first line (1-based) of the definition
    end: int  # last line, including a docstring statement that follows an alias


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        return _base_name(node.value)
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)


def _is_type_alias_call(node: ast.stmt) -> str | None:
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and _base_name(node.value.func) == "TypeAliasType"
    ):
        return node.targets[0].id
    return None


def definitions(module: str, source: str) -> list[Definition]:
    """Top-level classes and ``TypeAliasType`` aliases of a module, in source order."""
    body = ast.parse(source).body
    found: list[Definition] = []
    for position, node in enumerate(body):
        following = body[position + 1] if position + 1 < len(body) else None
        if isinstance(node, ast.ClassDef):
            bases = tuple(_base_name(base) for base in node.bases)
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append(Definition(node.name, module, "class", bases, start, _end(node)))
        elif (alias := _is_type_alias_call(node)) is not None:
            end = _end(node)
            if _is_docstring(following) and following is not None:
                end = _end(following)
            found.append(Definition(alias, module, "alias", (), node.lineno, end))
    return found


def _end(node: ast.stmt) -> int:
    end = node.end_lineno
    if end is None:  # pragma: no cover - always set by ast.parse
        raise PostprocessError("AST node without position")
    return end


def _is_docstring(node: ast.stmt | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _rename_all(modules: dict[str, str], renames: dict[str, str]) -> dict[str, str]:
    if not renames:
        return modules
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(renames))) + r")\b")
    return {
        path: pattern.sub(lambda m: renames[m.group(1)], text) for path, text in modules.items()
    }


def all_definitions(modules: dict[str, str]) -> list[Definition]:
    return [d for path in sorted(modules) for d in definitions(path, modules[path])]


# ------------------------------------------------------------------ 1. numbered combinations


def name_combinations(modules: dict[str, str], names: BranchNames) -> dict[str, str]:
    """Rename generator-numbered classes after their bases (see module docstring).

    Three more shapes come from unions nested three deep (an arm extending a union whose arm
    extends a union with its own properties, like ``session/update`` → state → idle → stop
    reason): the generator emits the same combination set twice (kept once), re-emits an
    alias under a number (mapped to the named one), and gives the outer arm a class that
    lost the innermost union (rebuilt by ``_rebuild_lost_arms``).
    """
    known = set(names.declared) | set(names.suffix)
    defs = all_definitions(modules)
    numbered = {d.name: d for d in defs if d.name not in known and _NUMBERED.match(d.name)}
    renames: dict[str, str] = {}
    lost: dict[str, str] = {}  # class that lost its arm → its shared base
    for name, definition in sorted(numbered.items()):
        match = _NUMBERED.match(name)
        assert match is not None
        stem = match.group("stem")
        siblings = [base for base in definition.bases if _is_sibling(base, stem)]
        distinguishing = [
            base
            for base in definition.bases
            if base not in _PLAIN_BASES and not _is_sibling(base, stem)
        ]
        if len(distinguishing) == 1 and distinguishing[0] in names.suffix:
            renames[name] = stem + names.suffix[distinguishing[0]]
        elif not distinguishing and _is_shared_base(name, defs):
            renames[name] = stem + "Base"
        elif not distinguishing and definition.kind == "class" and len(siblings) == 1:
            lost[name] = siblings[0]
    renames.update(_repeated_aliases(modules, numbered, renames))
    _check_renames(modules, defs, numbered, renames)
    left = sorted(set(numbered) - set(renames) - set(lost))
    if left:
        raise PostprocessError(
            "generator produced numbered class names that cannot be named from the schema: "
            + ", ".join(f"{n} ({numbered[n].module})" for n in left)
            + ". Give the union branches a tag or a title in schema/."
        )
    renamed = _drop_repeated_definitions(_rename_all(modules, renames))
    rebuilt = _rebuild_lost_arms(renamed, lost, renames, names)
    return {path: _in_dependency_order(text) for path, text in rebuilt.items()}


def _segment_shape(source: str, definition: Definition, renames: dict[str, str]) -> str:
    """A definition's meaning after ``renames``, ignoring its own name and its formatting."""
    segment = _rename_all({"x": _segment(source, definition)}, renames)["x"]
    tree = ast.parse(segment)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            node.name = "_"
        elif isinstance(node, ast.Assign) and _is_type_alias_call(node):
            node.targets = [ast.Name(id="_", ctx=ast.Store())]
            call = node.value
            assert isinstance(call, ast.Call)
            call.args = [call.args[1]]  # drop the alias's own name
    return ast.dump(_Unqualify().visit(tree), include_attributes=False)


def _repeated_aliases(
    modules: dict[str, str], numbered: dict[str, Definition], renames: dict[str, str]
) -> dict[str, str]:
    """Numbered aliases that repeat a named alias of the same module, mapped to that name."""
    found: dict[str, str] = {}
    for name, definition in sorted(numbered.items()):
        if definition.kind != "alias" or name in renames:
            continue
        source = modules[definition.module]
        shape = _segment_shape(source, definition, renames)
        for other in definitions(definition.module, source):
            if (
                other.kind == "alias"
                and other.name not in numbered
                and _segment_shape(source, other, renames) == shape
            ):
                found[name] = other.name
                break
    return found


def _check_renames(
    modules: dict[str, str],
    defs: list[Definition],
    numbered: dict[str, Definition],
    renames: dict[str, str],
) -> None:
    """New names must be free, except where several numbered copies are the same class."""
    by_new: dict[str, list[str]] = {}
    for old, new in renames.items():
        by_new.setdefault(new, []).append(old)
    taken = {d.name for d in defs} - set(renames)
    clashes = []
    for new, olds in sorted(by_new.items()):
        if new in taken and not all(numbered[o].kind == "alias" for o in olds):
            clashes.append(f"{new} (already defined)")
        shapes = {_segment_shape(modules[numbered[o].module], numbered[o], renames) for o in olds}
        if len(shapes) > 1:
            clashes.append(f"{new} (from different classes {', '.join(sorted(olds))})")
    if clashes:
        raise PostprocessError(f"combination names clash: {'; '.join(clashes)}")


def _drop_repeated_definitions(modules: dict[str, str]) -> dict[str, str]:
    """Keep the first of several identical definitions of one name within a module."""
    result = dict(modules)
    for path, source in modules.items():
        seen: dict[str, str] = {}
        dropped: list[Definition] = []
        for definition in definitions(path, source):
            shape = _segment_shape(source, definition, {})
            if definition.name not in seen:
                seen[definition.name] = shape
            elif seen[definition.name] == shape:
                dropped.append(definition)
            else:
                raise PostprocessError(f"{definition.name} is generated twice, differently")
        if dropped:
            result[path] = _drop_and_import(source, path, dropped, [])
    return result


def _union_members(node: ast.expr) -> list[str] | None:
    """``A | B | C`` (optionally inside ``Annotated[…, Field(…)]``) → ``["A", "B", "C"]``."""
    if isinstance(node, ast.Subscript) and _base_name(node) == "Annotated":
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _union_members(inner)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _union_members(node.left), _union_members(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name | ast.Attribute):
        return [_base_name(node)]
    return None


def _aliases(source: str) -> dict[str, list[str]]:
    """Alias name → its union members, for every union alias of a module."""
    found: dict[str, list[str]] = {}
    for node in ast.parse(source).body:
        name = _is_type_alias_call(node)
        if name is not None:
            assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            members = _union_members(node.value.args[1])
            if members is not None:
                found[name] = members
    return found


def _rebuild_lost_arms(
    modules: dict[str, str], lost: dict[str, str], renames: dict[str, str], names: BranchNames
) -> dict[str, str]:
    """Replace each class that lost its arm by one class per member of the lost union.

    The outer arm ``A`` extends a union ``T``; the generator combines ``A``'s base with each
    member of ``T`` in order, but a member that is itself a union (an alias) cannot be a base
    class, so its combination comes out with no base of its own. Its position in ``A`` gives
    the member of ``T``; that member's classes each become a combination named
    ``A`` + (member class without the ``T`` prefix): ``SessionUpdateStateUpdateIdleEndTurn``.
    """
    result = dict(modules)
    for name, base in sorted(lost.items()):
        path = next(p for p, text in result.items() if re.search(rf"^class {name}\b", text, re.M))
        source = result[path]
        aliases = _aliases(source)
        outer = next((a for a, members in aliases.items() if name in members), None)
        target = names.extends.get(outer or "")
        if outer is None or target is None or target not in aliases:
            raise PostprocessError(f"{name} ({path}) lost its union arm and cannot be rebuilt")
        position = aliases[outer].index(name)
        member = aliases[target][position]
        inner = aliases.get(member)
        if inner is None or len(aliases[outer]) != len(aliases[target]):
            raise PostprocessError(f"{name} ({path}) does not line up with the members of {target}")
        new_base = renames.get(base, base)
        definition = next(d for d in definitions(path, source) if d.name == name)
        body = _segment(source, definition).splitlines()[1:]
        blocks: list[str] = []
        new_names = []
        for cls in inner:
            new_name = outer + (cls.removeprefix(target) if cls.startswith(target) else cls)
            new_names.append(new_name)
            blocks += [f"class {new_name}({cls}, {new_base}):", *body, "", ""]
        taken = {d.name for d in definitions(path, source)}
        if taken & set(new_names):
            raise PostprocessError(f"rebuilt arms clash: {sorted(taken & set(new_names))}")
        lines = source.splitlines()
        lines[definition.start - 1 : definition.end] = blocks[:-2]
        text = "\n".join(lines) + "\n"
        result[path] = re.sub(rf"\b{name}\b", " | ".join(new_names), text)
    return result


def _in_dependency_order(source: str) -> str:
    """Reorder top-level definitions so each comes after the names its bases/value use.

    Class bases and alias values are evaluated at import time; rebuilt arms can refer to
    classes the generator placed further down. Order is otherwise kept (a stable sort).
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    found = definitions("m", source)
    if not found:
        return source
    names = {d.name for d in found}
    needs: dict[str, set[str]] = {}
    for node in tree.body:
        eager: list[ast.expr] = []
        if isinstance(node, ast.ClassDef):
            eager, own = list(node.bases), node.name
        elif (alias := _is_type_alias_call(node)) is not None:
            assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            eager, own = list(node.value.args[1:]), alias
        else:
            continue
        used = {n.id for e in eager for n in ast.walk(e) if isinstance(n, ast.Name)}
        needs[own] = (used & names) - {own}
    ordered: list[Definition] = []
    placed: set[str] = set()
    pending = list(found)
    while pending:
        ready = next((d for d in pending if needs.get(d.name, set()) <= placed), None)
        if ready is None:
            raise PostprocessError(f"circular definitions: {[d.name for d in pending]}")
        ordered.append(ready)
        placed.add(ready.name)
        pending.remove(ready)
    if ordered == found:
        return source
    head = lines[: found[0].start - 1]
    blocks = ["\n".join(lines[d.start - 1 : d.end]) for d in ordered]
    tail = lines[found[-1].end :]
    return "\n".join([*head, "\n\n\n".join(blocks), *tail]).rstrip("\n") + "\n"


def _is_sibling(base: str, stem: str) -> bool:
    return base.startswith(stem) and base[len(stem) :].isdigit()


def _is_shared_base(name: str, defs: Iterable[Definition]) -> bool:
    return any(name in d.bases for d in defs)


# ------------------------------------------------------------------ 2. duplicate definitions


def dedupe_definitions(modules: dict[str, str], names: BranchNames) -> dict[str, str]:
    """Keep one copy of each verbatim-duplicated class; the others import it."""
    by_name: dict[str, list[Definition]] = {}
    for definition in all_definitions(modules):
        by_name.setdefault(definition.name, []).append(definition)
    removals: dict[str, list[Definition]] = {}
    imports: dict[str, list[tuple[str, str]]] = {}
    for name, copies in sorted(by_name.items()):
        if len(copies) < 2:
            continue
        owner = _owner_module(name, copies, names)
        kept = next(c for c in copies if c.module == owner)
        kept_shape = _shape(_segment(modules[owner], kept))
        for duplicate in copies:
            if duplicate.module == owner:
                continue
            if _shape(_segment(modules[duplicate.module], duplicate)) != kept_shape:
                raise PostprocessError(
                    f"{name} is generated differently in {owner} and {duplicate.module}"
                )
            removals.setdefault(duplicate.module, []).append(duplicate)
            imports.setdefault(duplicate.module, []).append((owner, name))
    result = dict(modules)
    for module, dropped in removals.items():
        result[module] = _drop_and_import(result[module], module, dropped, imports[module])
    return result


def _owner_module(name: str, copies: list[Definition], names: BranchNames) -> str:
    relpath = names.declared.get(name) or names.owner.get(name)
    candidates = [c.module for c in copies]
    if relpath is not None:
        for module in candidates:
            if module_path_for(relpath) == module:
                return module
    raise PostprocessError(f"{name} is defined in {candidates} and none of them owns it")


def module_path_for(schema_relpath: str) -> str:
    """Generated file (relative to ``models/``) for a schema file."""
    parts = schema_relpath.removesuffix(".json").split("/")
    return "/".join(part.replace(".", "_").replace("-", "_") for part in parts) + ".py"


def _segment(source: str, definition: Definition) -> str:
    lines = source.splitlines()
    return "\n".join(lines[definition.start - 1 : definition.end])


class _Unqualify(ast.NodeTransformer):
    """``elicitation.ElicitationSchema`` → ``ElicitationSchema`` (names are unique)."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name):
            return ast.copy_location(ast.Name(id=node.attr, ctx=node.ctx), node)
        return self.generic_visit(node)


def _shape(segment: str) -> str:
    """A definition's meaning, independent of formatting and of how names were imported."""
    return ast.dump(_Unqualify().visit(ast.parse(segment)), include_attributes=False)


def _relative_import(from_module: str, to_module: str) -> str:
    """``methods/x.py`` importing ``defs/y.py`` → ``..defs.y``."""
    here = from_module.split("/")[:-1]
    there = to_module.removesuffix(".py").split("/")
    common = 0
    while common < min(len(here), len(there) - 1) and here[common] == there[common]:
        common += 1
    dots = "." * (len(here) - common + 1)
    return dots + ".".join(there[common:])


def _drop_and_import(
    source: str, module: str, dropped: list[Definition], wanted: list[tuple[str, str]]
) -> str:
    lines = source.splitlines()
    for definition in sorted(dropped, key=lambda d: d.start, reverse=True):
        start, end = definition.start - 1, definition.end
        while end < len(lines) and not lines[end].strip():
            end += 1  # take the blank lines that separated it from the next definition
        del lines[start:end]
    grouped: dict[str, list[str]] = {}
    for owner, name in wanted:
        grouped.setdefault(_relative_import(module, owner), []).append(name)
    new_imports: list[str] = []
    for target, items in sorted(grouped.items()):
        new_imports.append(f"from {target} import (")
        new_imports.extend(f"    {item}," for item in sorted(set(items)))
        new_imports.append(")")
    last_import = _last_import_line("\n".join(lines))
    lines[last_import:last_import] = new_imports
    return "\n".join(lines).rstrip("\n") + "\n"


def _last_import_line(source: str) -> int:
    last = 0
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            last = _end(node)
    return last


# ------------------------------------------------------------------ 3. root models for methods


def aliases_to_root_models(modules: dict[str, str], model_names: set[str]) -> dict[str, str]:
    """Turn ``X = TypeAliasType("X", T)`` into ``class X(RootModel[T])`` for ``model_names``."""
    result = dict(modules)
    for path in sorted(modules):
        source = result[path]
        targets = [
            d for d in definitions(path, source) if d.kind == "alias" and d.name in model_names
        ]
        if not targets:
            continue
        tree = ast.parse(source)
        lines = source.splitlines()
        for definition in sorted(targets, key=lambda d: d.start, reverse=True):
            node, docstring = _alias_nodes(tree, definition.name)
            call = node.value
            assert isinstance(call, ast.Call)
            type_text = ast.unparse(call.args[1])
            block = [f"class {definition.name}(RootModel[{type_text}]):"]
            if docstring is not None:
                block += [
                    '    """',
                    *(f"    {ln}" if ln else "" for ln in docstring),
                    '    """',
                    "",
                ]
            block.append(f"    root: {type_text}")
            lines[definition.start - 1 : definition.end] = block
        updated = _ensure_pydantic_import("\n".join(lines) + "\n", "RootModel")
        result[path] = _ensure_pydantic_import(updated, "ConfigDict")
    return result


def _alias_nodes(tree: ast.Module, name: str) -> tuple[ast.Assign, list[str] | None]:
    for position, node in enumerate(tree.body):
        if isinstance(node, ast.Assign) and _is_type_alias_call(node) == name:
            following = tree.body[position + 1] if position + 1 < len(tree.body) else None
            docstring = None
            if _is_docstring(following):
                assert isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                docstring = str(following.value.value).strip("\n").splitlines()
            return node, docstring
    raise PostprocessError(f"alias {name} not found")


def _ensure_pydantic_import(source: str, name: str) -> str:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "pydantic" and node.level == 0:
            present = {alias.name for alias in node.names}
            if name in present:
                return source
            lines = source.splitlines()
            merged = ", ".join(sorted(present | {name}))
            lines[node.lineno - 1 : _end(node)] = [f"from pydantic import {merged}"]
            return "\n".join(lines) + "\n"
    lines = source.splitlines()
    position = _last_import_line(source)
    lines[position:position] = [f"from pydantic import {name}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ defer_build


_CONFIG_OPEN = re.compile(r"^(?P<indent>[ ]+)model_config = ConfigDict\($", re.MULTILINE)


def defer_schema_builds(modules: dict[str, str]) -> dict[str, str]:
    """Add ``defer_build=True`` to every generated ``model_config``."""

    def add(match: re.Match[str]) -> str:
        return f"{match.group(0)}\n{match.group('indent')}    defer_build=True,"

    return {path: _CONFIG_OPEN.sub(add, text) for path, text in modules.items()}


# ------------------------------------------------------------------ reject known tags


def reject_known_tags(modules: dict[str, str], names: BranchNames) -> dict[str, str]:
    """Add a validator refusing known tag values to every class of a catch-all arm.

    The arm's classes are the one named like the branch and those generated from it
    (``…OtherSession``/``…OtherRequest`` when the arm mixes in its own union); each that
    declares the tag field as a plain string gets the validator.
    """
    if not names.open_tags:
        return modules
    result = dict(modules)
    placed: set[str] = set()
    for path in sorted(modules):
        tree = ast.parse(result[path])
        insertions: list[tuple[int, list[str]]] = []
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for branch, (tag, values) in names.open_tags.items():
                if not node.name.startswith(branch):
                    continue
                field_name = _plain_string_field(node, tag)
                if field_name is not None:
                    insertions.append((_end(node), _refusing_validator(field_name, tag, values)))
                    placed.add(branch)
        if insertions:
            lines = result[path].splitlines()
            for end, block in sorted(insertions, reverse=True):
                lines[end:end] = block
            result[path] = _ensure_pydantic_import("\n".join(lines) + "\n", "field_validator")
    missing = sorted(set(names.open_tags) - placed)
    if missing:
        raise PostprocessError(f"catch-all arms without a plain string tag field: {missing}")
    return result


def _plain_string_field(node: ast.ClassDef, tag: str) -> str | None:
    """The Python name of the field carrying wire name ``tag`` when it is typed ``str``."""
    for statement in node.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        annotation = statement.annotation
        alias = statement.target.id
        if isinstance(annotation, ast.Subscript) and _base_name(annotation) == "Annotated":
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
            if not parts:
                continue
            annotation = parts[0]
            for extra in parts[1:]:
                for keyword in extra.keywords if isinstance(extra, ast.Call) else []:
                    if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant):
                        alias = str(keyword.value.value)
        if alias == tag and isinstance(annotation, ast.Name) and annotation.id == "str":
            return statement.target.id
    return None


def _refusing_validator(field_name: str, tag: str, values: tuple[str, ...]) -> list[str]:
    known = "(" + ", ".join(json.dumps(v) for v in values) + ("," if len(values) == 1 else "") + ")"
    return [
        "",
        f"    @field_validator({json.dumps(field_name)})",
        "    @classmethod",
        f"    def reject_known_{field_name}(cls, value: str) -> str:",
        f'        """A known ``{tag}`` here is a broken known variant, not a new one."""',
        f"        if value in {known}:",
        "            raise ValueError(",
        f'                f"{tag} {{value!r}} is a known variant; the message does not match it"',
        "            )",
        "        return value",
    ]
