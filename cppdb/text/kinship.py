"""Chinese kinship terms and the relation each names.

English kin words neutralise what Chinese keeps apart — seniority (brother: 哥哥 / 弟弟),
lineage (grandfather: 爷爷 / 外公; uncle: 伯伯 / 叔叔 / 舅舅) and sex (child: 儿子 / 女儿) —
so pivoting through English pairs 你哥哥 with 你弟弟.  Two terms of one relation (哥 / 哥哥,
父亲 / 爸爸) are synonyms; terms of different relations never are.  Generic terms that cover
several relations (兄弟, 姐妹, 父母, 孩子, 亲戚) are deliberately absent: 哥哥 / 兄弟 is a
loss of detail, not a different person.  Partners count as kin here (男朋友 / 女朋友,
未婚夫 / 未婚妻, 前女友 / 女朋友: another person each).
"""
from __future__ import annotations

import polars as pl

_RELATIONS: dict[str, tuple[str, ...]] = {
    "father": ("爸爸", "爸", "父亲", "老爸", "爹"),
    "mother": ("妈妈", "妈", "母亲", "老妈", "娘"),
    "older brother": ("哥哥", "哥", "兄长", "大哥"),
    "younger brother": ("弟弟", "弟", "小弟"),
    "older sister": ("姐姐", "姐", "大姐"),
    "younger sister": ("妹妹", "妹", "小妹"),
    "paternal grandfather": ("爷爷", "祖父"),
    "paternal grandmother": ("奶奶", "祖母"),
    "maternal grandfather": ("外公", "姥爷", "外祖父"),
    "maternal grandmother": ("外婆", "姥姥", "外祖母"),
    "father's older brother": ("伯伯", "伯父", "大伯"),
    "father's younger brother": ("叔叔", "叔父"),
    "mother's brother": ("舅舅", "舅父", "舅"),
    "father's sister": ("姑姑", "姑妈"),
    "mother's sister": ("姨妈", "姨", "姨母"),
    "father's older brother's wife": ("伯母",),
    "father's younger brother's wife": ("婶婶", "婶母", "婶"),
    "mother's brother's wife": ("舅妈", "舅母"),
    "father's sister's husband": ("姑父", "姑丈"),
    "mother's sister's husband": ("姨父", "姨丈"),
    "older brother's wife": ("嫂子", "嫂嫂", "嫂"),
    "younger brother's wife": ("弟媳", "弟妹"),
    "older sister's husband": ("姐夫",),
    "younger sister's husband": ("妹夫",),
    "brother's son": ("侄子", "侄儿"),
    "brother's daughter": ("侄女",),
    "sister's son": ("外甥",),
    "sister's daughter": ("外甥女",),
    "son's wife": ("儿媳", "儿媳妇"),
    "daughter's husband": ("女婿",),
    "daughter's son": ("外孙",),
    "daughter's daughter": ("外孙女",),
    "brother and younger sister": ("兄妹",),
    "sister and younger brother": ("姐弟",),
    "son": ("儿子",),
    "daughter": ("女儿",),
    "grandson": ("孙子",),
    "granddaughter": ("孙女",),
    "husband": ("丈夫", "老公"),
    "wife": ("妻子", "老婆", "太太"),
    # partners: English "partner", "ex" and "fiancé(e)" join them as freely as kin
    "boyfriend": ("男朋友", "男友"),
    "girlfriend": ("女朋友", "女友"),
    "fiancé": ("未婚夫",),
    "fiancée": ("未婚妻",),
    "former husband": ("前夫",),
    "former wife": ("前妻",),
    "former boyfriend": ("前男友",),
    "former girlfriend": ("前女友",),
}

#: every kinship word and the relation it names
KIN_RELATION: dict[str, str] = {word: relation for relation, words in _RELATIONS.items()
                                for word in words}
#: the generic terms left out above: each covers several relations, so a dictionary may gloss
#: it by one of them (兄弟 "brothers; younger brother") without it naming that one
GENERIC_KIN_TERMS = frozenset({"兄弟", "姐妹", "兄弟姐妹", "父母", "孩子", "子女", "亲戚"})


def kin_relations(words: pl.Expr) -> pl.Expr:
    """The distinct relations the kin terms of a list of words name (other words dropped)."""
    return words.list.eval(pl.element().replace_strict(KIN_RELATION, default=None,
                                                       return_dtype=pl.String)
                           ).list.drop_nulls().list.unique()
