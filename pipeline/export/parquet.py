"""The Parquet edge of `vmine export`: the tables' Arrow schemas, derived from the dataset
models (so a column's type never depends on which values a release happens to hold), and
the files. pyarrow is the optional `export` extra; it is imported here only."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

from pipeline.dataset.models import ErrorRecord, IndexEntry
from pipeline.export.tables import ExportError


def _arrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ExportError(
            "--format hf needs pyarrow: pip install 'vmine[export]' (or pip install pyarrow)"
        ) from None
    return pyarrow


def arrow_type(annotation: Any):
    """The Arrow type of a model field's annotation.

    | annotation                        | Arrow                   |
    |-----------------------------------|-------------------------|
    | str, a checked str, Literal["x"]  | string                  |
    | int, LineNumber, Literal[2]       | int64                   |
    | bool                              | bool                    |
    | None (a field always null)        | string (all null)       |
    | X or None                         | X, nullable             |
    | list[X]                           | list of X               |
    | a model                           | struct of its fields    |
    """
    pa = _arrow()
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return arrow_type(args[0])
    if origin is typing.Literal:
        return arrow_type(type(args[0]))
    if origin in (typing.Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        return arrow_type(kept[0]) if len(kept) == 1 else pa.string()
    if origin is list:
        return pa.list_(arrow_type(args[0]))
    if annotation is type(None) or annotation is None or annotation is str:
        return pa.string()
    if annotation is bool:
        return pa.bool_()
    if annotation is int:
        return pa.int64()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(_fields(annotation))
    raise TypeError(f"no Arrow type for {annotation!r}")


def _fields(model: type[BaseModel]) -> list:
    pa = _arrow()
    return [
        pa.field(info.alias or name, arrow_type(info.annotation))
        for name, info in model.model_fields.items()
        if not info.exclude
    ]


def record_schema():
    pa = _arrow()
    return pa.schema(
        [
            *_fields(ErrorRecord),
            pa.field("datasetVersion", pa.string()),
            pa.field("release", pa.string()),
        ]
    )


def index_schema(rows: list[dict[str, Any]]):
    """The index table's schema; `verification` has the type its values share (written by
    `vmine verify`, whose shape this module does not fix), null when no row has one."""
    pa = _arrow()
    values = [row["verification"] for row in rows if row["verification"] is not None]
    if values:
        try:
            verification = pa.array(values).type
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise ExportError(
                f"verification.jsonl: its lines do not share one shape ({error})"
            ) from None
    else:
        verification = pa.null()
    return pa.schema(
        [
            *_fields(IndexEntry),
            pa.field("release", pa.string()),
            pa.field("verification", verification),
        ]
    )


def parquet_bytes(rows: list[dict[str, Any]], schema) -> bytes:
    """The rows as one Parquet file (zstd), in memory: the caller writes it atomically."""
    pa = _arrow()
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = pa.BufferOutputStream()
    pa.parquet.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def require_pyarrow() -> None:
    """Fail before any work when the extra is missing."""
    _arrow()
