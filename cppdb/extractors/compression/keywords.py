"""Keyword alignment between a headline H and its sentence S.

Methods (run as a cascade in the configured order; a later method only aligns headline tokens
that the earlier ones left unaligned, so each link is attributed to exactly one method):

* ``word`` — word match (Filippova & Altun 2013): a headline content word equal to a sentence
  token.  Each headline occurrence takes the next unused sentence occurrence.
* ``abbrev`` — abbreviation match (Hasegawa et al. 2017): the headline word's characters are a
  subsequence of the characters of a run of consecutive sentence nouns, anchored at the first
  character of a noun (西 -> 西班牙, 中 / 美 -> 中国 / 美国, but not 西 -> 巴西); else a long
  form CC-CEDICT gives for the word occurs in S (京 -> 北京, 交大 -> 上海交通大学); else,
  character by character, for a word made of abbreviations (中俄 -> 中国 + 俄罗斯, 京沪) or one
  the dictionary lacks (访华 -> 访问 + 中国): :mod:`~cppdb.extractors.compression.lexicon`.
* ``paraphrase`` — cppdb's paraphrase-aware alignment: a headline character span that is a
  table entry is linked to a sentence character span that is one of its paraphrases
  (留守 -> 剩余), each projected to the tokens it overlaps.  Longer entries first; best table
  score first.
* ``gloss`` — a headline content word and a sentence content word that CC-CEDICT glosses
  alike: a shared gloss (抓获/逮捕 "to arrest", 逝世/去世), or a shared character and a shared
  gloss stem (夺冠 "to win a championship" / 冠军 "champion").  It generalises to pairs no
  paraphrase table has seen.
* ``bert`` — BERT-align (Zhao et al. 2022): mean character vectors per word, row-wise max
  cosine, from the bundled multilingual-e5-small (``compression.bert_encoder = "e5-tokens"``,
  :mod:`cppdb.extractors.compression.bert_e5`) or a local Chinese BERT directory
  (:class:`BertAligner`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cppdb.annotate.ud import TaggedText
from cppdb.config import resolve
from cppdb.defaults import toml_defaults
from cppdb.embed.encoders import _model_checksum
from cppdb.errors import BackendUnavailableError, ConfigError, ModelNotFoundError
from cppdb.registry import Backend
from cppdb.extractors.compression.lexicon import Lexicon, cedict_lexicon
from cppdb.extractors.compression.paraphrase_table import ParaphraseTable
from cppdb.extractors.compression.settings import CompressionToml

_COMPRESSION = toml_defaults("compression")

METHODS = ("word", "verbatim", "abbrev", "paraphrase", "gloss", "bert")

#: UPOS of the non-content headline words ``verbatim`` aligns: numbers and ordinals (第十一次,
#: 首个), determiners and pronouns (我国, 各): they carry news the content-word rule leaves out
VERBATIM_UPOS = frozenset({"NUM", "DET", "PRON"})


@dataclass(frozen=True)
class Link:
    """Headline tokens ``[h_start, h_end)`` aligned to sentence tokens ``[s_start, s_end)``."""

    h_start: int
    h_end: int
    s_start: int
    s_end: int
    method: str
    score: float = 1.0
    #: for paraphrase links: the table entry and the paraphrase matched (characters)
    matched: tuple[str, str] | None = None

    def sentence_tokens(self) -> range:
        return range(self.s_start, self.s_end)

    def to_json(self, headline: Sequence[str], sentence: Sequence[str]) -> dict:
        return {"headline": "".join(headline[self.h_start:self.h_end]),
                "sentence": "".join(sentence[self.s_start:self.s_end]),
                "h_start": self.h_start, "h_end": self.h_end,
                "s_start": self.s_start, "s_end": self.s_end,
                "method": self.method, "score": round(self.score, 4),
                **({"matched": list(self.matched)} if self.matched else {})}


#: a headline or a sentence as the aligners see it: jieba tokens with UPOS
Tokens = TaggedText


def _is_han_word(token: str) -> bool:
    return bool(token) and all("\u3400" <= ch <= "\u9fff" for ch in token)


def token_positions(tokens: Sequence[str]) -> dict[str, list[int]]:
    """Each token's indices in the sentence, in order (for count-preserving matching)."""
    positions: dict[str, list[int]] = {}
    for index, token in enumerate(tokens):
        positions.setdefault(token, []).append(index)
    return positions


def word_links(headline: Tokens, sentence: Tokens, covered: set[int],
               content_upos: frozenset[str]) -> list[Link]:
    """Identical content words; count-preserving (next unused occurrence first)."""
    positions = token_positions(sentence.tokens)
    used: set[int] = set()
    links = []
    for h, (token, upos) in enumerate(zip(headline.tokens, headline.upos)):
        if h in covered or upos not in content_upos or token not in positions:
            continue
        candidates = positions[token]
        s = next((i for i in candidates if i not in used), candidates[0])
        used.add(s)
        links.append(Link(h, h + 1, s, s + 1, "word"))
    return links


def verbatim_links(headline: Tokens, sentence: Tokens, covered: set[int],
                   content_upos: frozenset[str]) -> list[Link]:
    """Identical non-content words that still carry news: numbers, ordinals, determiners,
    pronouns (any length), and other function words of two or more characters (关于, 之际).
    One-character particles and prepositions (的 在 并) are left to the tree rules."""
    positions = token_positions(sentence.tokens)
    used: set[int] = set()
    links = []
    for h, (token, upos) in enumerate(zip(headline.tokens, headline.upos)):
        if h in covered or upos in content_upos or upos == "PUNCT" or token not in positions:
            continue
        if upos not in VERBATIM_UPOS and len(token) < 2:
            continue
        s = next((i for i in positions[token] if i not in used), None)
        if s is None:
            continue
        used.add(s)
        links.append(Link(h, h + 1, s, s + 1, "verbatim"))
    return links


def _noun_runs(sentence: Tokens, noun_upos: frozenset[str]) -> list[tuple[int, int]]:
    runs, start = [], None
    for index, upos in enumerate(sentence.upos + ("",)):
        inside = upos in noun_upos and index < len(sentence.tokens) \
            and _is_han_word(sentence.tokens[index])
        if inside and start is None:
            start = index
        elif not inside and start is not None:
            runs.append((start, index))
            start = None
    return runs


def _subsequence_span(word: str, tokens: Sequence[str], first: int, stop: int) -> int | None:
    """Last token index used when ``word`` is a subsequence of tokens[first:stop] starting at
    the first character of tokens[first]; None if it is not."""
    if not tokens[first].startswith(word[0]):
        return None
    chars = [(ch, t) for t in range(first, stop) for ch in tokens[t]]
    position, last = 1, first
    for needed in word[1:]:
        while position < len(chars) and chars[position][0] != needed:
            position += 1
        if position == len(chars):
            return None
        last = chars[position][1]
        position += 1
    return last


def abbreviation_links(headline: Tokens, sentence: Tokens, covered: set[int],
                       content_upos: frozenset[str], noun_upos: frozenset[str],
                       lexicon: Lexicon | None = None) -> list[Link]:
    """Headline words that abbreviate a run of sentence nouns (西 -> 西班牙), else (with a
    lexicon) a long form of the word or of each of its characters found in S."""
    runs = _noun_runs(sentence, noun_upos)
    links: list[Link] = []
    for h, (word, upos) in enumerate(zip(headline.tokens, headline.upos)):
        if h in covered or upos not in content_upos or not _is_han_word(word):
            continue
        found = _subsequence_link(h, word, sentence.tokens, runs)
        if found:
            links.append(found)
        elif lexicon is not None:
            links.extend(lexicon_links(h, word, sentence, content_upos, lexicon))
    return links


def _subsequence_link(h: int, word: str, tokens: Sequence[str],
                      runs: list[tuple[int, int]]) -> Link | None:
    for run_start, run_stop in runs:
        for first in range(run_start, run_stop):
            last = _subsequence_span(word, tokens, first, run_stop)
            if last is None:
                continue
            expanded = "".join(tokens[first:last + 1])
            if expanded != word and len(expanded) > len(word):
                return Link(h, h + 1, first, last + 1, "abbrev")
    return None


def lexicon_links(h: int, word: str, sentence: Tokens, content_upos: frozenset[str],
                  lexicon: Lexicon) -> list[Link]:
    """A long form of ``word`` found in S; else, when every piece is explained, one link per
    piece (the word cut into dictionary words): the piece inside a sentence word (海军 in 国海军), a long form of
    it (京 -> 北京), or a sentence word sharing a character that the dictionary glosses alike
    (访 -> 访问).  Piece by piece only for a word the dictionary lacks or whose every character
    abbreviates a name (中俄): a dictionary word such as 中学 is not the sum of its parts."""
    chars, owner, _ = _char_map(sentence.tokens)
    whole = _find_long_form(word, chars, owner, lexicon)
    if whole is not None:
        return [Link(h, h + 1, whole[0], whole[1], "abbrev", matched=(word, whole[2]))]
    if len(word) < 2:
        return []
    if word in lexicon.glosses and not all(lexicon.expansions(c) for c in word):
        return []
    links = []
    for piece in lexicon.pieces(word) if word not in lexicon.glosses else list(word):
        at = chars.find(piece) if len(piece) > 1 else -1
        span = ((owner[at], owner[at + len(piece) - 1] + 1, piece) if at >= 0 else
                _find_long_form(piece, chars, owner, lexicon)
                or _gloss_host(piece, sentence, content_upos, lexicon))
        if span is None:     # all pieces or none: a half-explained word is left to the
            return []        # later methods (留守人员: 人员 alone would hide 留守 -> 剩余)
        links.append(Link(h, h + 1, span[0], span[1], "abbrev", matched=(piece, span[2])))
    return links


def _find_long_form(word: str, chars: str, owner: list[int],
                    lexicon: Lexicon) -> tuple[int, int, str] | None:
    """(first token, stop token, long form) of the first long form of ``word`` in S."""
    for long in lexicon.expansions(word):
        at = chars.find(long)
        if at >= 0:
            return owner[at], owner[at + len(long) - 1] + 1, long
    return None


def _gloss_host(piece: str, sentence: Tokens, content_upos: frozenset[str],
                lexicon: Lexicon) -> tuple[int, int, str] | None:
    """The first sentence content word sharing a character with ``piece`` and glossed like
    it."""
    for s, (token, upos) in enumerate(zip(sentence.tokens, sentence.upos)):
        if upos in content_upos and token != piece and set(piece) & set(token) \
                and lexicon.same_meaning(piece, token):
            return s, s + 1, token
    return None


def gloss_links(headline: Tokens, sentence: Tokens, covered: set[int],
                content_upos: frozenset[str], lexicon: Lexicon) -> list[Link]:
    """Each unaligned headline content word to the sentence content word the dictionary
    glosses most alike (a shared gloss before a shared character + gloss stem; on a tie the
    longer word — 新政 to 政策, not to 新 — then the first)."""
    links = []
    candidates = [s for s, (t, u) in enumerate(zip(sentence.tokens, sentence.upos))
                  if u in content_upos and _is_han_word(t)]
    for h, (word, upos) in enumerate(zip(headline.tokens, headline.upos)):
        if h in covered or upos not in content_upos or not _is_han_word(word):
            continue
        scored = [(lexicon.same_meaning(word, sentence.tokens[s]), len(sentence.tokens[s]), -s)
                  for s in candidates if sentence.tokens[s] != word]
        best = max(scored, default=(0, 0, 0))
        if best[0] > 0:
            s = -best[2]
            links.append(Link(h, h + 1, s, s + 1, "gloss", float(best[0])))
    return links


def _char_map(tokens: Sequence[str]) -> tuple[str, list[int], set[int]]:
    """Joined characters, the token of each character, and the token-boundary offsets."""
    owner = [t for t, token in enumerate(tokens) for _ in token]
    bounds, offset = {0}, 0
    for token in tokens:
        offset += len(token)
        bounds.add(offset)
    return "".join(tokens), owner, bounds


def _usable(start: int, stop: int, bounds: set[int]) -> bool:
    """A match may cut into a token only if it has at least two characters (a one-character
    entry must be a whole token: 会 must not match inside 会议)."""
    return (start in bounds and stop in bounds) or stop - start >= 2


def paraphrase_links(headline: Tokens, sentence: Tokens, covered: set[int],
                     table: ParaphraseTable, content_upos: frozenset[str],
                     max_tokens: int) -> list[Link]:
    """Headline character spans that are table entries, linked to sentence character spans
    that are paraphrases of them; both projected to the tokens they overlap.

    Matching is on characters because jieba's segmentation of H, of S and of the table differ
    (H 留守人员 is one token, the table has 留守 -> 剩余).  Longer entries first; best score
    first; a span may cover at most ``max_tokens`` tokens on either side.
    """
    h_chars, h_owner, h_bounds = _char_map(headline.tokens)
    s_chars, s_owner, s_bounds = _char_map(sentence.tokens)
    longest = min(len(h_chars), max((len(k) for k in table.index), default=0))
    # characters already explained (earlier methods work on whole tokens; two paraphrase
    # entries may share a token: 物价上涨 = 物价 -> 消费价格 + 上涨 -> 上升)
    taken = {c for c, owner in enumerate(h_owner) if owner in covered}
    links = []
    for length in range(longest, 0, -1):
        for start in range(0, len(h_chars) - length + 1):
            stop = start + length
            if not _usable(start, stop, h_bounds) or taken & set(range(start, stop)):
                continue
            span = range(h_owner[start], h_owner[stop - 1] + 1)
            if len(span) > max_tokens or not any(headline.upos[i] in content_upos for i in span):
                continue
            link = _find_paraphrase(h_chars[start:stop], span, s_chars, s_owner, s_bounds,
                                    table, max_tokens)
            if link is not None:
                links.append(link)
                taken.update(range(start, stop))
    return sorted(links, key=lambda link: (link.h_start, link.s_start))


def _find_paraphrase(key: str, span: range, s_chars: str, s_owner: list[int],
                     s_bounds: set[int], table: ParaphraseTable, max_tokens: int) -> Link | None:
    for paraphrase, score in table.lookup(key):
        found = s_chars.find(paraphrase)
        while found >= 0:
            stop = found + len(paraphrase)
            first, last = s_owner[found], s_owner[stop - 1]
            if _usable(found, stop, s_bounds) and last - first < max_tokens:
                return Link(span.start, span.stop, first, last + 1, "paraphrase", score,
                            (key, paraphrase))
            found = s_chars.find(paraphrase, found + 1)
    return None


class BertAligner(Backend):
    """BERT-align: word vector = mean of its characters' last-layer vectors; for every
    unaligned headline content word, the sentence word with the highest cosine.

    Loads a local Chinese BERT directory (``save_pretrained`` layout, e.g. bert-base-chinese);
    never downloads.  H and S are encoded separately, as in the paper.  Registered as the
    ``transformers`` backend of the ``compression_aligner`` capability.
    """

    name: ClassVar[str] = "transformers"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("torch", "torch"),
                                                        ("transformers", "transformers"))
    install_hint: ClassVar[str] = ("pip install 'cppdb[neural]' and set compression.bert_dir "
                                   "to a saved Chinese BERT (bert-base-chinese)")
    description: ClassVar[str] = "BERT-align over a local Chinese BERT directory"

    @classmethod
    def from_config(cls, config: Any) -> "BertAligner":
        toml = resolve(CompressionToml, config)
        return cls(toml.bert_dir, batch_size=toml.bert_batch_size, min_cosine=toml.bert_min_cosine)

    def signature(self) -> str:
        model = (f"{self.model_dir.name}#{_model_checksum(self.model_dir)}"
                 if self.model_dir.is_dir() else f"{self.model_dir.name}#missing")
        return f"bert-align[{self.version()}]|model:{model}"

    def __init__(self, model_dir: str | Path, *, batch_size: int = _COMPRESSION["bert_batch_size"],
                 min_cosine: float = _COMPRESSION["bert_min_cosine"]) -> None:
        if not str(model_dir):
            raise ConfigError("alignment method 'bert' needs a local Chinese BERT directory",
                              hint="--bert-dir DIR or --set compression.bert_dir=DIR "
                                   "(e.g. a saved bert-base-chinese)")
        self.model_dir = Path(model_dir).expanduser()
        self.batch_size = batch_size
        self.min_cosine = min_cosine
        self._model: Any = None
        self._tokenizer: Any = None

    def check(self) -> None:
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:
            raise BackendUnavailableError("BERT-align needs torch and transformers",
                                          hint="pip install 'cppdb[neural]'") from exc
        if not (self.model_dir / "config.json").is_file():
            raise ModelNotFoundError(
                f"no BERT model at {self.model_dir} (config.json missing)",
                hint="save a Chinese BERT there with save_pretrained (bert-base-chinese)")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model_dir": str(self.model_dir)}

    def _load(self) -> None:
        if self._model is None:
            self.check()
            from transformers import AutoModel, AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir))
            self._model = AutoModel.from_pretrained(str(self.model_dir)).eval()

    def _encode_one(self, words: Sequence[str]) -> tuple[list[int], list[tuple[int, int]]]:
        tok = self._tokenizer
        limit = min(getattr(tok, "model_max_length", 512) or 512, 512) - 2
        ids: list[int] = [tok.cls_token_id]
        ranges = []
        for word in words:
            pieces = tok.convert_tokens_to_ids(tok.tokenize(word)) or [tok.unk_token_id]
            start = len(ids)
            if start - 1 + len(pieces) > limit:
                pieces = pieces[: max(0, limit - (start - 1))]
            ids.extend(pieces)
            ranges.append((start, len(ids)))
        ids.append(tok.sep_token_id)
        return ids, ranges

    def word_vectors(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """One (n_words, hidden) array per sentence (zeros for words cut by truncation)."""
        import torch

        self._load()
        out: list[np.ndarray] = []
        for begin in range(0, len(sentences), self.batch_size):
            batch = [self._encode_one(words) for words in sentences[begin:begin + self.batch_size]]
            width = max(len(ids) for ids, _ in batch)
            pad = self._tokenizer.pad_token_id or 0
            input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch])
            mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
            with torch.no_grad():
                hidden = self._model(input_ids=input_ids, attention_mask=mask).last_hidden_state
            hidden = hidden.numpy()
            for row, (_, ranges) in enumerate(batch):
                vectors = np.zeros((len(ranges), hidden.shape[-1]), dtype=np.float32)
                for w, (start, stop) in enumerate(ranges):
                    if stop > start:
                        vectors[w] = hidden[row, start:stop].mean(axis=0)
                out.append(vectors)
        return out

    def links(self, headlines: Sequence[Tokens], sentences: Sequence[Tokens],
              covered: Sequence[set[int]], content_upos: frozenset[str]) -> list[list[Link]]:
        """Row-wise max cosine links for a batch of pairs."""
        vectors = self.word_vectors([h.tokens for h in headlines] + [s.tokens for s in sentences])
        h_vecs, s_vecs = vectors[:len(headlines)], vectors[len(headlines):]
        result = []
        for headline, sentence, done, hv, sv in zip(headlines, sentences, covered, h_vecs, s_vecs):
            candidates = [i for i, u in enumerate(sentence.upos) if u != "PUNCT"]
            links: list[Link] = []
            if candidates:
                cosine = _cosine(hv, sv[candidates])
                for h, upos in enumerate(headline.upos):
                    if h in done or upos not in content_upos:
                        continue
                    best = int(np.argmax(cosine[h]))
                    if cosine[h, best] >= self.min_cosine:
                        s = candidates[best]
                        links.append(Link(h, h + 1, s, s + 1, "bert", float(cosine[h, best])))
            result.append(links)
        return result


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return a @ b.T


@dataclass(frozen=True)
class AlignSettings:
    methods: tuple[str, ...]
    content_upos: frozenset[str]
    abbrev_upos: frozenset[str]
    paraphrase_max_tokens: int = _COMPRESSION["paraphrase_max_tokens"]

    def __post_init__(self) -> None:
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ConfigError(f"unknown alignment method(s): {', '.join(unknown)}",
                              hint=f"choose from: {', '.join(METHODS)}")


def align_batch(headlines: Sequence[Tokens], sentences: Sequence[Tokens],
                settings: AlignSettings, table: ParaphraseTable | None = None,
                bert: BertAligner | None = None) -> list[list[Link]]:
    """Run the method cascade over a batch of (headline, sentence) pairs."""
    if "paraphrase" in settings.methods and table is None:
        raise ConfigError("alignment method 'paraphrase' needs a paraphrase table",
                          hint="pass --paraphrases RUN_DIR_OR_TABLE, or drop 'paraphrase' "
                               "from --methods")
    if "bert" in settings.methods and bert is None:
        raise ConfigError("alignment method 'bert' needs a BERT model directory",
                          hint="--bert-dir DIR or --set compression.bert_dir=DIR")
    all_links: list[list[Link]] = [[] for _ in headlines]
    covered: list[set[int]] = [set() for _ in headlines]
    lexicon = cedict_lexicon() if {"abbrev", "gloss"} & set(settings.methods) else None
    for method in settings.methods:
        if method == "bert":
            found = bert.links(headlines, sentences, covered, settings.content_upos)
        else:
            found = [_one_method(method, h, s, done, settings, table, lexicon)
                     for h, s, done in zip(headlines, sentences, covered)]
        for links, done, new in zip(all_links, covered, found):
            links.extend(new)
            for link in new:
                done.update(range(link.h_start, link.h_end))
    return all_links


def _one_method(method: str, headline: Tokens, sentence: Tokens, covered: set[int],
                settings: AlignSettings, table: ParaphraseTable | None,
                lexicon: Lexicon | None) -> list[Link]:
    if method == "word":
        return word_links(headline, sentence, covered, settings.content_upos)
    if method == "verbatim":
        return verbatim_links(headline, sentence, covered, settings.content_upos)
    if method == "abbrev":
        return abbreviation_links(headline, sentence, covered, settings.content_upos,
                                  settings.abbrev_upos, lexicon)
    if method == "gloss":
        return gloss_links(headline, sentence, covered, settings.content_upos, lexicon)
    return paraphrase_links(headline, sentence, covered, table, settings.content_upos,
                            settings.paraphrase_max_tokens)
