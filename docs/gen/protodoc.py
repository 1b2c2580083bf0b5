"""The protocol reference, written from the `.proto` files themselves at every site build.

protoc (from grpcio-tools, which builds `referee/v1` too) compiles `proto/referee/v1/*.proto` into
a descriptor set with source info: every service, method, message, field, enum and value, with
the comments written above or beside it. This module turns that into one Markdown page per
`.proto` file, so a comment changed in a `.proto` is in the site at its next build and no page
holds a copy to keep in step.
"""
from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import descriptor_pb2 as d

# Field numbers of the descriptor messages, the steps of a SourceCodeInfo.Location.path.
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE, FILE_SYNTAX = 4, 5, 6, 12
MSG_FIELD, MSG_NESTED, MSG_ENUM = 2, 3, 4
ENUM_VALUE = 2
SERVICE_METHOD = 2

SCALARS = {
    d.FieldDescriptorProto.TYPE_DOUBLE: "double", d.FieldDescriptorProto.TYPE_FLOAT: "float",
    d.FieldDescriptorProto.TYPE_INT64: "int64", d.FieldDescriptorProto.TYPE_UINT64: "uint64",
    d.FieldDescriptorProto.TYPE_INT32: "int32", d.FieldDescriptorProto.TYPE_FIXED64: "fixed64",
    d.FieldDescriptorProto.TYPE_FIXED32: "fixed32", d.FieldDescriptorProto.TYPE_BOOL: "bool",
    d.FieldDescriptorProto.TYPE_STRING: "string", d.FieldDescriptorProto.TYPE_BYTES: "bytes",
    d.FieldDescriptorProto.TYPE_UINT32: "uint32", d.FieldDescriptorProto.TYPE_SFIXED32: "sfixed32",
    d.FieldDescriptorProto.TYPE_SFIXED64: "sfixed64", d.FieldDescriptorProto.TYPE_SINT32: "sint32",
    d.FieldDescriptorProto.TYPE_SINT64: "sint64",
}


def descriptor_set(proto_root: Path, files: list[str]) -> d.FileDescriptorSet:
    """Compile ``files`` (paths relative to ``proto_root``) with their comments."""
    from grpc_tools import protoc

    include = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        code = protoc.main(["protoc", f"-I{proto_root}", f"-I{include}", "--include_source_info",
                            "--include_imports", f"--descriptor_set_out={out}", *files])
        if code != 0:
            raise RuntimeError(f"protoc failed ({code}) on {', '.join(files)}")
        return d.FileDescriptorSet.FromString(out.read_bytes())


@dataclass
class Comments:
    leading: str = ""
    trailing: str = ""
    detached: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "\n\n".join(t for t in (self.leading, self.trailing) if t)


def _comments(fd: d.FileDescriptorProto) -> dict[tuple[int, ...], Comments]:
    return {tuple(loc.path): Comments(_dedent(loc.leading_comments),
                                      _dedent(loc.trailing_comments),
                                      tuple(_dedent(c) for c in loc.leading_detached_comments))
            for loc in fd.source_code_info.location}


def _dedent(text: str) -> str:
    lines = text.rstrip().split("\n")
    # protoc keeps the one space after `//`; drop it from every line alike
    if all(not ln or ln.startswith(" ") for ln in lines):
        lines = [ln[1:] for ln in lines]
    return "\n".join(lines).strip("\n")


def anchor(full_name: str) -> str:
    """The HTML id of a message or enum's heading: its full name, dots as dashes."""
    return full_name.lstrip(".").replace(".", "-").lower()


def page_of(file_name: str) -> str:
    """The site page of a `.proto` file: `referee/v1/goa.proto` -> `goa.md`."""
    return Path(file_name).stem + ".md"


def escape(text: str) -> str:
    """``<`` and ``>`` outside code spans as entities: "<data-dir>/records" is text, not a tag."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;")
                   for p in parts)


def _cell(text: str) -> str:
    """A comment inside a table cell: one line, paragraphs kept, pipes escaped."""
    text = escape(text)
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "<br><br>".join(paras).replace("|", "\\|")


def _block(text: str) -> str:
    """A comment as Markdown paragraphs: a list gets the blank line Markdown needs before it,
    and lines indented as a table or a drawing are kept as they are, in a text block."""
    out: list[str] = []
    lines = text.split("\n")
    bullet = re.compile(r"\s*[*-] ")
    in_list = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if bullet.match(line):
            if not in_list and out and out[-1].strip():
                out.append("")
            out.append(escape(line.strip()))
            in_list = True
        elif in_list and re.match(r"\s{2,}\S", line):
            out.append("  " + escape(line.strip()))  # the item goes on
        elif re.match(r"\s{2,}\S", line):
            pre = []
            while i < len(lines) and (lines[i].startswith("  ") or not lines[i].strip()):
                pre.append(lines[i])
                i += 1
            out += ["", "```text", *[p for p in pre if p.strip()], "```", ""]
            continue
        else:
            if in_list and line.strip():
                out.append("")
            in_list = False
            out.append(escape(line))
        i += 1
    return "\n".join(out).strip()


class Page:
    """One `.proto` file's reference page."""

    def __init__(self, fd: d.FileDescriptorProto, pages: dict[str, str]):
        self.fd = fd
        self.comments = _comments(fd)
        self.pages = pages  # full type name -> page it is documented on
        self.lines: list[str] = []

    def c(self, *path: int) -> Comments:
        return self.comments.get(tuple(path), Comments())

    def link(self, type_name: str) -> str:
        page = self.pages.get(type_name)
        short = type_name.lstrip(".").removeprefix(self.fd.package + ".")
        if page is None:
            return f"`{short}`"
        here = page_of(self.fd.name)
        target = "" if page == here else page
        return f"[`{short}`]({target}#{anchor(type_name)})"

    def type_of(self, f: d.FieldDescriptorProto, msg: d.DescriptorProto) -> str:
        if f.type_name:
            entry = self._map_entry(f, msg)
            if entry is not None:
                k, v = entry.field
                return f"map&lt;{self._plain(k, entry)}, {self._plain(v, entry)}&gt;"
            return self.link(f.type_name)
        return f"`{SCALARS[f.type]}`"

    def _plain(self, f: d.FieldDescriptorProto, msg: d.DescriptorProto) -> str:
        return self.link(f.type_name) if f.type_name else f"`{SCALARS[f.type]}`"

    def _map_entry(self, f: d.FieldDescriptorProto,
                   msg: d.DescriptorProto) -> d.DescriptorProto | None:
        for nested in msg.nested_type:
            if nested.options.map_entry and f.type_name.endswith("." + nested.name):
                return nested
        return None

    def render(self) -> str:
        fd = self.fd
        self.lines = [f"# {Path(fd.name).name}", "",
                      (f"Package `{fd.package}`, file `proto/{fd.name}`. This page is written "
                      "from the file and its comments at each build of the site."), ""]
        header = self.c(FILE_SYNTAX)
        intro = [*header.detached, header.leading]
        if any(intro):
            self.lines += [_block(t) for t in intro if t] + [""]
        for i, svc in enumerate(fd.service):
            self.service(svc, (FILE_SERVICE, i))
        items: list[tuple[int, int, str]] = []  # (position in the file, index, kind)
        for i, _ in enumerate(fd.message_type):
            items.append((self._line(FILE_MESSAGE, i), i, "message"))
        for i, _ in enumerate(fd.enum_type):
            items.append((self._line(FILE_ENUM, i), i, "enum"))
        for _, i, kind in sorted(items):
            if kind == "message":
                self.message(fd.message_type[i], f".{fd.package}", (FILE_MESSAGE, i), 2)
            else:
                self.enum(fd.enum_type[i], f".{fd.package}", (FILE_ENUM, i), 2)
        return "\n".join(self.lines).rstrip() + "\n"

    def _line(self, *path: int) -> int:
        for loc in self.fd.source_code_info.location:
            if tuple(loc.path) == path:
                return loc.span[0]
        return 0

    def section_titles(self, path: tuple[int, ...]) -> None:
        """A `// ----- play` rule above a definition starts a section of the page."""
        for text in self.c(*path).detached:
            m = re.fullmatch(r"-{4,}\s*(.+)", text.strip())
            if m:
                self.lines += [f"## {m.group(1).strip().capitalize()}", ""]

    def service(self, svc: d.ServiceDescriptorProto, path: tuple[int, ...]) -> None:
        self.lines += [f"## Service `{svc.name}`", ""]
        if self.c(*path).text:
            self.lines += [_block(self.c(*path).text), ""]
        self.lines += ["| method | request | response | what it does |",
                       "| --- | --- | --- | --- |"]
        for j, m in enumerate(svc.method):
            req = ("stream " if m.client_streaming else "") + self.link(m.input_type)
            res = ("stream " if m.server_streaming else "") + self.link(m.output_type)
            self.lines.append(f"| `{m.name}` | {req} | {res} | "
                              f"{_cell(self.c(*path, SERVICE_METHOD, j).text)} |")
        self.lines.append("")

    def heading(self, kind: str, full: str, path: tuple[int, ...], level: int) -> str:
        """A message's or enum's heading (its anchor: its full name) and its comment."""
        if level == 2:
            self.section_titles(path)
        title = full.lstrip(".").removeprefix(self.fd.package + ".")
        self.lines += [f"{'#' * min(level + 1, 6)} {kind}`{title}` {{ #{anchor(full)} }}", ""]
        if self.c(*path).text:
            self.lines += [_block(self.c(*path).text), ""]
        return full

    def message(self, msg: d.DescriptorProto, scope: str, path: tuple[int, ...],
                level: int) -> None:
        if msg.options.map_entry:
            return
        full = self.heading("", f"{scope}.{msg.name}", path, level)
        if msg.field:
            self.lines += ["| field | number | type | meaning |", "| --- | --- | --- | --- |"]
            for j, f in enumerate(msg.field):
                kind = self.type_of(f, msg)
                if f.label == d.FieldDescriptorProto.LABEL_REPEATED and "map&lt;" not in kind:
                    kind = "repeated " + kind
                elif f.proto3_optional:
                    kind = "optional " + kind
                note = _cell(self.c(*path, MSG_FIELD, j).text)
                if f.HasField("oneof_index") and not f.proto3_optional:
                    oneof = msg.oneof_decl[f.oneof_index].name
                    note = f"one of `{oneof}`" + (f"; {note}" if note else "")
                self.lines.append(f"| `{f.name}` | {f.number} | {kind} | {note} |")
            self.lines.append("")
        else:
            self.lines += ["No fields.", ""]
        for j, e in enumerate(msg.enum_type):
            self.enum(e, full, (*path, MSG_ENUM, j), level + 1)
        for j, n in enumerate(msg.nested_type):
            self.message(n, full, (*path, MSG_NESTED, j), level + 1)

    def enum(self, enum: d.EnumDescriptorProto, scope: str, path: tuple[int, ...],
             level: int) -> None:
        self.heading("enum ", f"{scope}.{enum.name}", path, level)
        self.lines += ["| value | number | meaning |", "| --- | --- | --- |"]
        for j, v in enumerate(enum.value):
            self.lines.append(f"| `{v.name}` | {v.number} | "
                              f"{_cell(self.c(*path, ENUM_VALUE, j).text)} |")
        self.lines.append("")


def _types(fd: d.FileDescriptorProto) -> Iterator[str]:
    def walk(scope: str, msgs, enums) -> Iterator[str]:  # type: ignore[no-untyped-def]
        for e in enums:
            yield f"{scope}.{e.name}"
        for m in msgs:
            yield f"{scope}.{m.name}"
            yield from walk(f"{scope}.{m.name}", m.nested_type, m.enum_type)
    yield from walk(f".{fd.package}", fd.message_type, fd.enum_type)


def render(proto_root: Path, package_dir: str = "referee/v1") -> dict[str, str]:
    """Every `.proto` file under ``proto_root/package_dir`` as {page name: Markdown}."""
    files = sorted(str(p.relative_to(proto_root))
                   for p in (proto_root / package_dir).glob("*.proto"))
    fds = [fd for fd in descriptor_set(proto_root, files).file if fd.name in files]
    pages = {t: page_of(fd.name) for fd in fds for t in _types(fd)}
    return {page_of(fd.name): Page(fd, pages).render() for fd in fds}
