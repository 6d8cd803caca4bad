"""FASTA/FASTQ reading and sequence encoding (swath.sequences)."""

from __future__ import annotations

import doctest
import gzip
import itertools
import pickle
import re
import tracemalloc
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swath.errors import InputNotFound, InvalidInput, InvalidParameter, InvalidSequence
from swath.scoring import Alphabet, Scoring
from swath.sequences import (
    Record,
    SequenceSet,
    encode_sequence,
    encoding,
    iter_records,
    pairing,
    parsers,
    pieces,
    read_sequences,
    readers,
    sequence_set,
    sets,
)

PROTEIN = Alphabet("ARNDCQEGHILKMFPSTWYVBZX*", "X")
DNA = Alphabet("ACGTN", "N")
RNA = Alphabet("ACGU", None)  # no wildcard


def write(tmp_path: Path, name: str, text: str | bytes, *, gz: bool = False) -> Path:
    data = text.encode() if isinstance(text, str) else text
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def where(path: Path, line: int) -> str:
    """The start of an error message about ``path`` at ``line``, as a regex."""
    return re.escape(f"{path.name} line {line}:")


# --------------------------------------------------------------------------- FASTA


def test_fasta_multiline(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta",
                 ">sp|P1| first protein\nMKV\nLAW\nG\n>p2\nHEAGAWGHEE\n>p3 x  y \nM\n")
    seqs = read_sequences(path, PROTEIN)
    assert seqs.names == ("sp|P1|", "p2", "p3")
    assert seqs.descriptions == ("sp|P1| first protein", "p2", "p3 x  y")
    assert seqs.lengths.tolist() == [7, 10, 1]
    assert seqs.lengths.dtype == np.int64
    assert seqs.offsets.tolist() == [0, 7, 17, 18]
    assert [PROTEIN.decode(s) for s in seqs] == ["MKVLAWG", "HEAGAWGHEE", "M"]
    assert seqs.source == str(path)
    assert seqs.residues.dtype == np.uint8


def test_iter_records_lines_and_codes(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", "\n\n>a desc\nAC\nGT\n\n>b\nNN\n")
    records = list(iter_records(path, DNA))
    assert records == [Record("a", "a desc", np.array([0, 1, 2, 3], np.uint8), 3),
                       Record("b", "b", np.array([4, 4], np.uint8), 7)]
    assert repr(records[0]) == "Record(name='a', length=4, line=3)"
    assert pickle.loads(pickle.dumps(records[1])) == records[1]


def test_iter_records_is_lazy_but_checks_the_path(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound):
        iter_records(tmp_path / "missing.fasta", DNA)
    path = write(tmp_path, "q.fasta", ">a\nAC\n>b\nAZ\n")
    records = iter_records(path, DNA)
    assert next(records).name == "a"
    with pytest.raises(InvalidSequence, match=where(path, 4)):
        next(records)


def test_lowercase_and_whitespace(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nac gt\t\n  acg\n\n\n>b\n n \n")
    seqs = read_sequences(path, DNA)
    assert [DNA.decode(s) for s in seqs] == ["ACGTACG", "N"]


def test_crlf(tmp_path: Path) -> None:
    fasta = write(tmp_path, "q.fasta", ">a one\r\nACG\r\nT\r\n>b\r\nGG\r\n")
    fastq = write(tmp_path, "q.fastq", "@a one\r\nACGT\r\n+\r\nIIII\r\n@b\r\nGG\r\n+\r\n!!\r\n")
    for path in (fasta, fastq):
        seqs = read_sequences(path, DNA)
        assert seqs.descriptions == ("a one", "b")
        assert [DNA.decode(s) for s in seqs] == ["ACGT", "GG"]


def test_utf8_bom_and_path_types(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", b"\xef\xbb\xbf>a\nACGT\n")
    assert read_sequences(path, DNA) == read_sequences(str(path), DNA)
    assert read_sequences(path, DNA).names == ("a",)


def test_stop_codon(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nMKV*\n")
    assert PROTEIN.decode(read_sequences(path, PROTEIN)[0]) == "MKV*"
    dna = write(tmp_path, "d.fasta", ">a\nACGT*\n")
    with pytest.raises(InvalidSequence,
                       match=where(dna, 2) + r" residue '\*' is not in the DNA alphabet"):
        read_sequences(dna, DNA)
    assert DNA.decode(read_sequences(dna, DNA, wildcard=True)[0]) == "ACGTN"


def test_real_protein_alphabet(tmp_path: Path) -> None:
    alphabet = Scoring.protein("BLOSUM62").alphabet
    path = write(tmp_path, "q.fasta", ">a\nMKVJ\n")
    with pytest.raises(InvalidSequence, match="not in the protein alphabet"):
        read_sequences(path, alphabet)


# --------------------------------------------------------------------------- FASTQ


def test_fastq(tmp_path: Path) -> None:
    path = write(tmp_path, "r.fastq",
                 "@r1 lane 1\nACGT\n+r1 lane 1\nII#I\n@r2\nggnt\n+\n@@@@\n\n")
    records = list(iter_records(path, DNA))
    assert [(r.name, r.description, r.line) for r in records] == [
        ("r1", "r1 lane 1", 1), ("r2", "r2", 5)]
    assert [DNA.decode(r.codes) for r in records] == ["ACGT", "GGNT"]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_fastq_base_qualities_are_kept_and_fasta_has_none(tmp_path: Path, gz: bool) -> None:
    """A FASTQ record's quality line, as the file gives it, one a residue (CRLF and
    trailing blanks dropped; whitespace inside a sequence line drops its qualities too);
    a FASTA file's records have none."""
    text = ("@r1 x\r\nACGT\r\n+\r\nII#!\r\n@r2\nAC GT\n+\n12345\n"
            "@r3\nggnt\n+r3\n~@+5   \n")
    seqs = read_sequences(write(tmp_path, "r.fq", text, gz=gz), DNA)
    assert seqs.qualities is not None and len(seqs.qualities) == len(seqs.residues)
    assert [seqs.quality(i) for i in range(3)] == ["II#!", "1245", "~@+5"]
    assert read_sequences(write(tmp_path, "q.fa", ">a\nACGT\n", gz=gz), DNA).qualities is None
    assert sequence_set(["ACGT"], DNA).quality(0) is None


def test_sequence_sets_compare_and_pickle_their_qualities(tmp_path: Path) -> None:
    fastq = read_sequences(write(tmp_path, "r.fq", "@a\nACGT\n+\nIIII\n"), DNA)
    fasta = read_sequences(write(tmp_path, "r.fa", ">a\nACGT\n"), DNA)
    other = read_sequences(write(tmp_path, "s.fq", "@a\nACGT\n+\nIII#\n"), DNA)
    assert fastq != fasta and fastq != other and fasta == fasta
    again = pickle.loads(pickle.dumps(fastq))
    assert again == fastq and again.quality(0) == "IIII"
    with pytest.raises(InvalidParameter, match="qualities must be a 1-D uint8 array"):
        SequenceSet(("a",), ("a",), fasta.residues, fasta.offsets, None, np.zeros(3, np.uint8))


@pytest.mark.parametrize("name", ["q.fasta.gz", "q.fasta", "q.txt"])
def test_gzip_detected_by_magic(tmp_path: Path, name: str) -> None:
    text = ">a x\nACG\nT\n>b\nGG\n"
    plain = read_sequences(write(tmp_path, "plain.fa", text), DNA)
    zipped = read_sequences(write(tmp_path, name, text, gz=True), DNA)
    assert zipped == plain
    assert zipped.source != plain.source


def test_gzip_fastq(tmp_path: Path) -> None:
    path = write(tmp_path, "r.fq.gz", "@r1\nACGT\n+\nIIII\n@r2\nGG\n+\n!!\n", gz=True)
    seqs = read_sequences(path, DNA)
    assert seqs.names == ("r1", "r2")
    assert [DNA.decode(s) for s in seqs] == ["ACGT", "GG"]


def test_plain_file_named_gz(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta.gz", ">a\nACGT\n")
    assert DNA.decode(read_sequences(path, DNA)[0]) == "ACGT"


# --------------------------------------------------------------------------- wildcard


def test_wildcard(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nMJKOU\n")
    with pytest.raises(InvalidSequence, match=where(path, 2) + re.escape(
            " residue 'J' is not in the protein alphabet (use --wildcard to map it to X)")):
        read_sequences(path, PROTEIN)
    assert PROTEIN.decode(read_sequences(path, PROTEIN, wildcard=True)[0]) == "MXKXX"
    dna = write(tmp_path, "d.fasta", ">a\nACRYT\n")
    assert DNA.decode(read_sequences(dna, DNA, wildcard=True)[0]) == "ACNNT"


def test_wildcard_needs_a_wildcard(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nACGU\n")
    with pytest.raises(InvalidParameter, match="alphabet ACGU has no wildcard"):
        read_sequences(path, RNA, wildcard=True)
    with pytest.raises(InvalidParameter, match="no wildcard"):
        encode_sequence("ACGU", RNA, wildcard=True)


def test_unknown_residue_in_alphabet_without_wildcard(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nACGT\n")
    with pytest.raises(InvalidSequence,
                       match=where(path, 2) + r" residue 'T' is not in the alphabet ACGU$"):
        read_sequences(path, RNA)


@pytest.mark.parametrize("wildcard", [False, True])
@pytest.mark.parametrize("char", ["1", "#", "?", "~"])
def test_non_letters_are_errors_even_with_wildcard(tmp_path: Path, char: str,
                                                   wildcard: bool) -> None:
    path = write(tmp_path, "q.fasta", f">a\nMKV\nLA{char}W\n")
    with pytest.raises(InvalidInput, match=where(path, 3) + re.escape(
            f" character '{char}' is not a residue letter")):
        read_sequences(path, PROTEIN, wildcard=wildcard)


@pytest.mark.parametrize("gap", ["-", "."])
def test_gaps_are_errors(tmp_path: Path, gap: str) -> None:
    path = write(tmp_path, "q.fasta", f">a\nACGT\n>b\nAC{gap}GT\n")
    with pytest.raises(InvalidSequence, match=where(path, 4) +
                       " alignment gaps are not allowed in input sequences"):
        read_sequences(path, DNA, wildcard=True)


# --------------------------------------------------------------------------- file errors


def test_unknown_residue_line_number(tmp_path: Path) -> None:
    lines = [">a"] + ["ACGT"] * 5 + [">b second"] + ["ACGT"] * 4 + ["ACJT"]
    path = write(tmp_path, "q.fasta", "\n".join(lines) + "\n")
    with pytest.raises(InvalidSequence, match=where(path, 12) + re.escape(
            " residue 'J' is not in the DNA alphabet (use --wildcard to map it to N)")):
        read_sequences(path, DNA)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound, match=re.escape("nope.fasta: no such file")):
        read_sequences(tmp_path / "nope.fasta", DNA)
    with pytest.raises(FileNotFoundError):  # InputNotFound is one
        read_sequences(tmp_path / "nope.fasta", DNA)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound, match=re.escape(f"{tmp_path}: is a directory")):
        read_sequences(tmp_path, DNA)


def test_unreadable(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nACGT\n")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    with mock.patch.object(parsers, "open", refuse, create=True), pytest.raises(
            InputNotFound, match=re.escape("q.fasta: cannot be read (permission denied)")):
        read_sequences(path, DNA)


@pytest.mark.parametrize("text", ["", "\n\n  \n", "\r\n\t\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "x.fasta", text)
    with pytest.raises(InvalidInput, match=re.escape(
            "x.fasta: empty file, expected FASTA or FASTQ")):
        read_sequences(path, DNA)


def test_empty_gzip(tmp_path: Path) -> None:
    path = write(tmp_path, "x.fasta.gz", "", gz=True)
    with pytest.raises(InvalidInput, match=re.escape("x.fasta.gz: empty file")):
        read_sequences(path, DNA)


def test_not_fasta(tmp_path: Path) -> None:
    path = write(tmp_path, "x.fasta", "xyz\n>a\nACGT\n")
    with pytest.raises(InvalidInput, match=re.escape(
            "x.fasta line 1: not FASTA or FASTQ (expected '>' or '@', found 'x')")):
        read_sequences(path, DNA)
    path = write(tmp_path, "y.fasta", "\n\nACGT\n")
    with pytest.raises(InvalidInput, match=where(path, 3) + " not FASTA or FASTQ"):
        read_sequences(path, DNA)


def test_binary_garbage(tmp_path: Path) -> None:
    path = write(tmp_path, "x.fasta", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InvalidInput, match=where(path, 1) + r" not FASTA or FASTQ .*'\\x89'"):
        read_sequences(path, DNA)
    path = write(tmp_path, "y.fasta", b">a\nAC\x00\xffGT\n")
    with pytest.raises(InvalidInput, match=where(path, 2) + r" character '\\x00'"):
        read_sequences(path, DNA)


def test_non_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "x.fasta", b">a\nACGT\n>b \xff\xfe\nACGT\n")
    with pytest.raises(InvalidInput, match=where(path, 3) + " header is not valid UTF-8"):
        read_sequences(path, DNA)
    path = write(tmp_path, "y.fasta", "\ufeffACGT".encode("utf-16"))
    with pytest.raises(InvalidInput, match=where(path, 1) + " not FASTA or FASTQ"):
        read_sequences(path, DNA)
    path = write(tmp_path, "z.fasta", ">a\nACGTé\n")
    with pytest.raises(InvalidInput, match=where(path, 2) + r" character '\\xc3'"):
        read_sequences(path, DNA)


def test_corrupt_gzip(tmp_path: Path) -> None:
    path = write(tmp_path, "x.fasta.gz", b"\x1f\x8b" + bytes(range(200)))
    with pytest.raises(InvalidInput, match=re.escape("x.fasta.gz: cannot be read")):
        read_sequences(path, DNA)


def test_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(b">a\n" + b"ACGT" * 10000 + b"\n")
    path = write(tmp_path, "x.fasta.gz", data[: len(data) // 2])
    with pytest.raises(InvalidInput,
                       match=re.escape("x.fasta.gz: cannot be read, corrupt or truncated")):
        read_sequences(path, DNA)


@pytest.mark.parametrize(("text", "line", "name"), [
    (">a\nACGT\n>b desc\n>c\nACGT\n", 3, "b"),
    (">a\nACGT\n>b\n\n  \n>c\nACGT\n", 3, "b"),
    (">a\nACGT\n>last\n", 3, "last"),
    (">a\nACGT\n>last", 3, "last"),
    (">only\n", 1, "only"),
    ("@r\n\n+\n\n", 1, "r"),
])
def test_empty_record(tmp_path: Path, text: str, line: int, name: str) -> None:
    path = write(tmp_path, "x.fasta", text)
    with pytest.raises(InvalidSequence, match=where(path, line) + re.escape(
            f" record '{name}' has no residues")):
        read_sequences(path, DNA)


@pytest.mark.parametrize(("text", "line"), [(">a\nAC\n>\nACGT\n", 3),
                                            (">a\nAC\n>  \t\nACGT\n", 3),
                                            ("@a\nAC\n+\nII\n@\nAC\n+\nII\n", 5)])
def test_empty_name(tmp_path: Path, text: str, line: int) -> None:
    path = write(tmp_path, "x.fasta", text)
    with pytest.raises(InvalidInput, match=where(path, line) + " record has an empty name"):
        read_sequences(path, DNA)


@pytest.mark.parametrize(("text", "line", "message"), [
    ("@r1\nACGT\nIIII\n", 3, "expected the '+' line of FASTQ record 'r1', found 'I'"),
    ("@r1\nACGT\n\nIIII\n", 3, "expected the '+' line of FASTQ record 'r1', found a blank line"),
    ("@r1\nACGT\n+\nIII\n", 4, "FASTQ record 'r1' has 3 quality characters for 4 residues"),
    ("@r1\nACGT\n+\nIIII\n@r2\nAC\n+\nIIII\n", 8,
     "FASTQ record 'r2' has 4 quality characters for 2 residues"),
    ("@r1\nACGT\n+\nIIII\n@r2\n", 5, "FASTQ record 'r2' is truncated (no sequence line)"),
    ("@r1\nACGT\n+\nIIII\n@r2\nAC\n", 6, "FASTQ record 'r2' is truncated (no '+' line)"),
    ("@r1\nACGT\n+\nIIII\n@r2\nAC\n+\n", 7, "FASTQ record 'r2' is truncated (no quality line)"),
    ("@r1\nACGT\n+\nIIII\n>r2\nAC\n", 5, "expected a FASTQ header starting with '@', found '>'"),
])
def test_fastq_structure_errors(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, "r.fastq", text)
    with pytest.raises(InvalidInput, match=where(path, line) + " " + re.escape(message)):
        read_sequences(path, DNA)


def test_fastq_residue_error_line(tmp_path: Path) -> None:
    path = write(tmp_path, "r.fastq", "@r1\nACGT\n+\nIIII\n@r2\nACJT\n+\nIIII\n")
    with pytest.raises(InvalidSequence, match=where(path, 6) + " residue 'J'"):
        read_sequences(path, DNA)


# --------------------------------------------------------------------------- limit


def test_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a\nACGT\n>b\nGG\n>c\nBROKEN!\n")
    first = read_sequences(path, DNA, limit=1)
    assert first.names == ("a",)
    assert DNA.decode(first[0]) == "ACGT"
    assert read_sequences(path, DNA, limit=2).names == ("a", "b")
    with pytest.raises(InvalidSequence, match=where(path, 6)):
        read_sequences(path, DNA, limit=3)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidParameter, match="limit must be a positive integer"):
            read_sequences(path, DNA, limit=bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- SequenceSet


def test_sequence_set_pickle_equality_repr(tmp_path: Path) -> None:
    path = write(tmp_path, "q.fasta", ">a one\nACGT\n>b\nGG\n")
    seqs = read_sequences(path, DNA)
    again = pickle.loads(pickle.dumps(seqs))
    assert again == seqs
    assert again.source == seqs.source
    assert not again.residues.flags.writeable
    assert seqs == sequence_set(["ACGT", "GG"], DNA, names=["a", "b"]).__class__(
        ("a", "b"), ("a one", "b"), seqs.residues, seqs.offsets, None)
    assert seqs != sequence_set(["ACGT", "GG"], DNA, names=["a", "b"])  # descriptions differ
    assert seqs != sequence_set(["ACGT", "GA"], DNA, names=["a one", "b"])
    assert seqs != "ACGTGG"
    assert repr(seqs) == f"SequenceSet(2 sequences, 6 residues, source={str(path)!r})"
    with pytest.raises(TypeError):
        hash(seqs)


def test_sequence_set_indexing(tmp_path: Path) -> None:
    seqs = sequence_set(["ACGT", "G", "TT"], DNA)
    assert len(seqs) == 3
    assert seqs[-1].tolist() == [3, 3]
    assert seqs[np.int64(1)].tolist() == [2]
    assert [len(s) for s in seqs] == [4, 1, 2]
    with pytest.raises(IndexError, match="record 3 is out of range"):
        seqs[3]
    with pytest.raises(TypeError):
        seqs["a"]  # type: ignore[index]
    view = seqs[0]
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 1


def test_sequence_set_validates() -> None:
    residues = np.zeros(4, np.uint8)
    with pytest.raises(InvalidParameter, match="offsets must rise"):
        SequenceSet(("a",), ("a",), residues, np.array([0, 3]), None)
    with pytest.raises(InvalidParameter, match="n \\+ 1 offsets"):
        SequenceSet(("a",), ("a",), residues, np.array([0, 2, 4]), None)
    with pytest.raises(InvalidParameter, match="uint8"):
        SequenceSet(("a",), ("a",), residues.astype(np.int32), np.array([0, 4]), None)
    mine = np.zeros(4, np.uint8)
    SequenceSet(("a",), ("a",), mine, np.array([0, 4]), None)
    assert mine.flags.writeable  # the caller's array is left writable


def test_sequence_set_from_memory() -> None:
    seqs = sequence_set(["ACGT", b"gg", np.array([4, 0], np.uint8)], DNA)
    assert seqs.names == ("seq0", "seq1", "seq2")
    assert seqs.residues.tolist() == [0, 1, 2, 3, 2, 2, 4, 0]
    assert seqs.source is None
    assert len(sequence_set([], DNA)) == 0
    with pytest.raises(InvalidSequence, match=re.escape("seqs[1] position 2: residue 'Z'")):
        sequence_set(["ACGT", "AZ"], DNA)
    with pytest.raises(InvalidSequence, match=re.escape("second position 2: residue 'Z'")):
        sequence_set(["ACGT", "AZ"], DNA, names=["first", "second"])
    with pytest.raises(InvalidSequence, match=re.escape("seqs[0] is empty")):
        sequence_set([""], DNA)
    with pytest.raises(InvalidParameter, match="1 names given for 2 sequences"):
        sequence_set(["A", "C"], DNA, names=["a"])
    with pytest.raises(InvalidParameter, match="wrap it in a list"):
        sequence_set("ACGT", DNA)
    assert sequence_set(["ARZ"], DNA, wildcard=True)[0].tolist() == [0, 4, 4]


# --------------------------------------------------------------------------- encode_sequence


def test_encode_sequence_text() -> None:
    for seq in ("ACgtN", b"ACgtN", bytearray(b"ACgtN")):
        codes = encode_sequence(seq, DNA)
        assert codes.dtype == np.uint8
        assert codes.tolist() == [0, 1, 2, 3, 4]
    assert encode_sequence("MKV*", PROTEIN).tolist() == [12, 11, 19, 23]
    assert encode_sequence("MJ", PROTEIN, wildcard=True).tolist() == [12, 22]


def test_encode_sequence_array() -> None:
    codes = np.array([0, 1, 4], np.uint8)
    assert encode_sequence(codes, DNA) is codes
    wide = encode_sequence(np.array([0, 3], np.int64), DNA)
    assert wide.dtype == np.uint8
    assert wide.tolist() == [0, 3]
    with pytest.raises(InvalidSequence, match=re.escape(
            "q position 2: code 5 is not in the DNA alphabet (codes are 0 to 4)")):
        encode_sequence(np.array([0, 5], np.uint8), DNA, name="q")
    with pytest.raises(InvalidSequence, match="position 1: code -1"):
        encode_sequence(np.array([-1, 0]), DNA)
    with pytest.raises(InvalidSequence, match="1-D integer array"):
        encode_sequence(np.zeros((2, 2), np.uint8), DNA)
    with pytest.raises(InvalidSequence, match="1-D integer array"):
        encode_sequence(np.zeros(3), DNA)
    with pytest.raises(InvalidSequence, match="sequence is empty"):
        encode_sequence(np.zeros(0, np.uint8), DNA)


def test_encode_sequence_errors() -> None:
    with pytest.raises(InvalidSequence, match=re.escape(
            "query position 3: residue 'J' is not in the protein alphabet "
            "(use wildcard=True to map it to X)")):
        encode_sequence("MKJ", PROTEIN, name="query")
    with pytest.raises(InvalidSequence, match=re.escape("target is empty")):
        encode_sequence("", PROTEIN, name="target")
    with pytest.raises(InvalidSequence, match=re.escape("position 3: character ' '")):
        encode_sequence("AC GT", DNA)
    with pytest.raises(InvalidSequence, match=re.escape("position 2: character '1'")):
        encode_sequence("A1", DNA, wildcard=True)
    with pytest.raises(InvalidSequence, match="position 2: alignment gaps are not allowed"):
        encode_sequence("A-C", DNA)
    with pytest.raises(InvalidSequence, match=re.escape("position 3: character 'é'")):
        encode_sequence("ACé", DNA)
    with pytest.raises(InvalidParameter, match="got list"):
        encode_sequence(["A"], DNA)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="alphabet must be a swath Alphabet"):
        encode_sequence("A", "ACGT")  # type: ignore[arg-type]


def test_round_trip_decode(tmp_path: Path) -> None:
    text = "MKVLAAGIVALLLAAGCSSSKEETRFYDAAWRGQHEVKNLVEELS*"
    path = write(tmp_path, "q.fasta", f">a\n{text[:20]}\n{text[20:].lower()}\n")
    assert PROTEIN.decode(read_sequences(path, PROTEIN)[0]) == text
    assert PROTEIN.decode(encode_sequence(text, PROTEIN)) == text


# --------------------------------------------------------------------------- streaming


@pytest.mark.parametrize("block", [1, 2, 3, 5, 8, 13])
def test_tiny_blocks_give_the_same_result(tmp_path: Path, block: int) -> None:
    text = ">a long header line\nACGT\nAC\n\n>b\n>c\nG\n"
    path = write(tmp_path, "q.fasta", text)
    with pytest.raises(InvalidSequence, match=where(path, 5) + " record 'b' has no residues"), \
            mock.patch.object(parsers, "_BLOCK", block):
        read_sequences(path, DNA)
    text = ">a long header line\nACGT\nAC\n\n>b\nT\n>c\nG\n>d\nAAAAAAAAAAAAAAAAAAC"
    path = write(tmp_path, "q.fasta", text)
    expected = read_sequences(path, DNA)
    with mock.patch.object(parsers, "_BLOCK", block):
        assert read_sequences(path, DNA) == expected
        assert [r.line for r in iter_records(path, DNA)] == [1, 5, 7, 9]
        bad = write(tmp_path, "bad.fasta", text + "AAAJ\n")
        with pytest.raises(InvalidSequence, match=where(bad, 10) + " residue 'J'"):
            read_sequences(bad, DNA)


def test_memory_is_about_the_output(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    letters = np.frombuffer(b"ACGT", np.uint8)
    lines = []
    for i in range(50):
        seq = letters[rng.integers(0, 4, 80_000)].tobytes()
        lines.append(b">s%d\n" % i)
        lines.extend(seq[j:j + 60] + b"\n" for j in range(0, len(seq), 60))
    path = write(tmp_path, "big.fasta", b"".join(lines))
    size = path.stat().st_size
    tracemalloc.start()
    try:
        seqs = read_sequences(path, DNA)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(seqs.residues) == 4_000_000
    assert peak < 2 * size


@pytest.mark.parametrize("module", [encoding, readers, sets, pieces, pairing])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# --------------------------------------------------------------------------- pieces


def pieces_of(path: Path, alphabet: Alphabet, size: int, *, wildcard: bool = False
              ) -> tuple[list[int], list[pieces.Parsed]]:
    """A file cut into pieces of about ``size`` bytes (a plain file planned, a gzip one
    streamed), each parsed (with a FASTQ file's qualities): their starts, and their
    records."""
    fmt, gz = pieces.file_format(path, str(path))
    encoder = encoding.translator(alphabet, wildcard)
    if gz:
        with parsers.open_file(path, str(path)) as stream:
            cuts = list(pieces.cut(stream, fmt, str(path), size))
        text = gzip.decompress(path.read_bytes())
        lines = [1 + text.count(b"\n", 0, start) for start, _ in cuts]
        return [start for start, _ in cuts], [
            pieces.parse(data, fmt, encoder, str(path), lambda line=line: line, True)
            for (_, data), line in zip(cuts, lines, strict=True)]
    bounds = pieces.plan(path, fmt, size).tolist()
    return bounds[:-1], [pieces.parse(pieces.read_range(path, start, end), fmt, encoder,
                                      str(path), lambda start=start: pieces.line_of(path, start),
                                      True)
                         for start, end in itertools.pairwise(bounds)]


def joined(parts: list[pieces.Parsed]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Consecutive pieces' records as one: names, residues, offsets."""
    ends = np.cumsum([0] + [len(p.residues) for p in parts])
    names = [name for p in parts for name in pieces.decode_names(
        p.names, p.name_offsets[:-1], p.name_offsets[1:])]
    return (names, np.concatenate([p.residues for p in parts]),
            np.concatenate([[0]] + [p.offsets[1:] + end for p, end in zip(parts, ends,
                                                                         strict=False)]))


def same(parts: list[pieces.Parsed], want: SequenceSet) -> bool:
    """The pieces hold the set's records: names, residues and qualities (FASTQ's)."""
    names, residues, offsets = joined(parts)
    kept = {p.qualities is None for p in parts}
    if kept != {want.qualities is None}:
        return False
    qualities = None if want.qualities is None else np.concatenate(
        [p.qualities for p in parts if p.qualities is not None])
    return (names == list(want.names) and np.array_equal(residues, want.residues)
            and np.array_equal(offsets, want.offsets)
            and (qualities is None or np.array_equal(qualities, want.qualities)))


PIECE_FILES = {
    "plain": ">a one\nACGT\n>b\nGG\n>c  two words \nA\n>d\nACGTNACGT\n",
    "wrapped": ">a\nAC\nGT\nA\n\n>b desc\nG\nGGG\n>c\nT\n",
    "lower": ">a\nacgt\n>b\nAcGtN\n",
    "crlf": ">a x\r\nAC\r\nGT\r\n>b\r\nG\r\n",
    "blank lines": "\n\n>a\nACGT\n\n\n>b\nC\n\n",
    "no final newline": ">a\nACGT\n>b\nCC",
    "spaces in lines": ">a\nAC GT \n>b\n G\n",
    "fastq": "@r1 x\nACGT\n+\nIIII\n@r2\nacg\n+r2\nIII\n@r3\nN\n+\n#\n",
    "fastq qualities like headers": "@r1\nACGT\n+\n@III\n@r2\nAC\n+\n@I\n@r3\nG\n+\n@\n",
    "fastq crlf, no final newline": "@r1 x\r\nACGT\r\n+\r\nIIII\r\n@r2\r\nacg\r\n+\r\nIII",
    "fastq blank lines": "@r1\nACGT\n+\nIIII\n\n@r2\nAC\n+\nII\n",
    "fastq spaces in lines": "@r1\nAC GT\n+\nI#!II\n@r2\nAC\n+\nI# \n",
    "odd headers": ">a\x0bb c\nAC\n>d~e\nGT\n>f\tg\nA\n",
}


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(PIECE_FILES))
def test_pieces_are_the_records_read_sequences_reads(tmp_path: Path, name: str,
                                                     gz: bool) -> None:
    """Pieces of every size from one byte (records straddle every cut; a piece may hold
    nothing but blank lines) to the whole file; a stream is cut where the file is."""
    path = write(tmp_path, "q.fa", PIECE_FILES[name], gz=gz)
    plain = write(tmp_path, "plain.fa", PIECE_FILES[name])
    want = read_sequences(path, DNA)
    for size in (1, 2, 3, 5, 8, 13, 1 << 23):
        starts, parts = pieces_of(path, DNA, size)
        assert same(parts, want), size
        assert starts == pieces_of(plain, DNA, size)[0], size
    assert len(parts) == 1


def test_pieces_of_well_formed_files_are_read_in_numpy_passes(tmp_path: Path) -> None:
    """swath's own parser is not asked (also FASTQ in a file named .fa: the content says
    which, not the name); an empty piece is no records."""
    for name in ("plain", "wrapped", "lower", "crlf", "no final newline", "fastq",
                 "fastq qualities like headers", "fastq crlf, no final newline"):
        path = write(tmp_path, "q.fa", PIECE_FILES[name])
        with mock.patch.object(pieces, "stream_records", side_effect=AssertionError):
            assert same(pieces_of(path, DNA, 4)[1], read_sequences(path, DNA)), name
    empty = pieces.parse(b"", "fasta", encoding.translator(DNA, False), "q.fa", lambda: 1)
    assert (len(empty), empty.residues.tolist(), empty.name_offsets.tolist()) == (0, [], [0])
    fastq = write(tmp_path, "q.fq", PIECE_FILES["fastq"]).read_bytes()
    assert pieces.parse(fastq, "fastq", encoding.translator(DNA, False), "q.fq",
                        lambda: 1).qualities is None        # not asked for: not kept


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("text", [
    ">a\nACGT\n>b\nACGT\n>c\nAC\nGJ\n",             # a residue not in the alphabet
    ">a\nACGT\n>b desc\n>c\nACGT\n",                 # an empty record
    ">a\nACGT\n>\nACGT\n",                             # an empty name
    ">a\nACGT\n>b\nAC-GT\n",                           # a gap
    ">a\nACGT\n>b\nACGTé\n",                           # not ASCII
    ">a\nACGT\n>b \xff\nAC\n",                        # a header not UTF-8
    ">a\nACGT\n>b\nACGT\n>c",                          # a last header without residues
    "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nIII\n",       # qualities short
    "@r1\nACGT\n+\nIIII\n@r2\nAC\n",                   # truncated
    "@r1\nACGT\n+\nIIII\n>r2\nAC\n",                   # FASTA after FASTQ
])
@pytest.mark.parametrize("size", [1, 7, 1 << 23])
def test_pieces_fall_back_to_swaths_exact_errors(tmp_path: Path, text: str, size: int,
                                                 gz: bool) -> None:
    """The first piece refused says what the whole file's parser says, its line too."""
    path = write(tmp_path, "q.fa", text.encode("latin-1") if "\xff" in text else text, gz=gz)
    with pytest.raises((InvalidInput, InvalidSequence)) as want:
        read_sequences(path, DNA)
    with pytest.raises(type(want.value), match=f"^{re.escape(str(want.value))}$"):
        pieces_of(path, DNA, size)


def test_files_are_refused_at_once_and_wildcards_mapped(tmp_path: Path) -> None:
    with pytest.raises(InputNotFound, match=re.escape("missing.fa: no such file")):
        pieces.file_format(tmp_path / "missing.fa", "missing.fa")
    for text in ("", "\n \n"):
        with pytest.raises(InvalidInput, match="empty file"):
            pieces.file_format(write(tmp_path, "e.fa", text), "e.fa")
    path = write(tmp_path, "t.fa.gz", gzip.compress(b">a\nACGT\n" * 50)[:30])
    with pytest.raises(InvalidInput, match=r"t\.fa\.gz: cannot be read, corrupt or truncated"):
        pieces_of(path, DNA, 8)
    path = write(tmp_path, "q.fa", ">a\nACGT\n>b\nAXRY\n", gz=True)
    with pytest.raises(InvalidSequence, match=where(path, 4) + " residue 'X'"):
        pieces_of(path, DNA, 3)
    assert same(pieces_of(path, DNA, 3, wildcard=True)[1],
                read_sequences(path, DNA, wildcard=True))


# --------------------------------------------------------------------------- properties


@settings(deadline=None, max_examples=60)
@given(
    seqs=st.lists(st.text(alphabet="ACDEFGHIKLMNPQRSTVWYacdefghiklmnpqrstvwyBZX*", min_size=1,
                          max_size=300), min_size=1, max_size=8),
    width=st.integers(min_value=1, max_value=100),
    newline=st.sampled_from(["\n", "\r\n"]),
    gz=st.booleans(),
    block=st.sampled_from([3, 64, 1 << 20]),
)
def test_fasta_round_trip(tmp_path_factory: pytest.TempPathFactory, seqs: list[str], width: int,
                          newline: str, gz: bool, block: int) -> None:
    names = [f"s{i}" for i in range(len(seqs))]
    text = "".join(
        f">{name}{newline}" + "".join(seq[j:j + width] + newline
                                      for j in range(0, len(seq), width))
        for name, seq in zip(names, seqs, strict=True)
    )
    path = write(tmp_path_factory.mktemp("fasta"), "q.fasta", text, gz=gz)
    with mock.patch.object(parsers, "_BLOCK", block):
        got = read_sequences(path, PROTEIN)
    assert got == sequence_set(seqs, PROTEIN, names=names)
    assert [PROTEIN.decode(s) for s in got] == [s.upper() for s in seqs]


def test_dna_read_as_protein_is_warned_about_once(tmp_path, caplog):
    dna = write(tmp_path, "dna.fa", ">a\nACGTACGTNN\n>b\nacgt\n")
    protein = write(tmp_path, "protein.fa", ">p\nMKTAYIAKQR\n>q\nACGT\n")
    with caplog.at_level("WARNING", logger="swath"):
        read_sequences(dna, PROTEIN)
        read_sequences(protein, PROTEIN)
        read_sequences(dna, DNA)
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 1 and warned[0].startswith(f"{dna}: the sequences hold only A, C, G")
    assert "--dna" in warned[0]


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
@pytest.mark.parametrize("mean", [3, 300])
def test_taking_short_and_long_sequences_gives_the_same(mean, dtype):
    """``take_concatenated`` gives every item (short ones: CIGARs, names; long ones:
    amplicons; empty ones) in the order asked, repeats included, in the set's dtype."""
    from swath.sequences import take_concatenated

    rng = np.random.default_rng(mean)
    lengths = rng.integers(0, 2 * mean, 50)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    residues = rng.integers(0, 255, offsets[-1]).astype(dtype)
    index = rng.integers(0, 50, 80)
    got, at = take_concatenated(residues, offsets, index)
    want = [residues[offsets[k]:offsets[k + 1]] for k in index]
    assert at.tolist() == np.concatenate([[0], np.cumsum([len(w) for w in want])]).tolist()
    assert got.dtype == dtype and got.tolist() == np.concatenate(want).tolist()
    nothing, none_at = take_concatenated(residues, offsets, index[:0])
    assert (len(nothing), none_at.tolist(), nothing.dtype) == (0, [0], dtype)
    strided = np.repeat(index.astype(np.uint32), 2)[::2]        # int32 offsets too
    again, again_at = take_concatenated(residues, offsets.astype(np.int32), strided)
    assert np.array_equal(again, got) and np.array_equal(again_at, at)
    with pytest.raises(TypeError, match="index must hold integers"):
        take_concatenated(residues, offsets, np.ones(50, dtype=bool))


@pytest.mark.parametrize("name", ["q\x1b[31mq0", "q\x07", "q\x7f", "q\u200b"])
def test_a_name_with_a_character_that_does_not_print_is_refused(name, tmp_path):
    """A name holding an ANSI escape or another character that does not print would be
    printed changed (or change the terminal): refused, naming the file's line, whether
    the file is read whole or in pieces."""
    from swath.sequences.encoding import translator
    from swath.sequences.pieces import parse

    text = f">ok\nACGT\n>{name} description\nACGT\n"
    path = tmp_path / "s.fa"
    path.write_bytes(text.encode())
    message = rf"s.fa line 3: name {re.escape(repr(name))} holds a character that does not print"
    with pytest.raises(InvalidInput, match=message):
        read_sequences(str(path), DNA)
    with pytest.raises(InvalidInput, match=message):
        parse(text.encode(), "fasta", translator(DNA, False), "s.fa", lambda: 1)
    printable = ">ok\nACGT\n>q1 a description\x1b[0m\nACGT\n"   # a description's are kept
    assert parse(printable.encode(), "fasta", translator(DNA, False), "s.fa",
                 lambda: 1).names.tobytes() == b"okq1"
