#!/bin/bash
# Rebuild raw/ of the wmt-news-zhen corpus (docs/corpora.md) from three repository snapshots:
#   bash devtools/wmt_news_raw.sh OPUS W23 W24 RAW
# OPUS, W23, W24: bare git directories of Helsinki-NLP/OPUS-MT-testsets,
# wmt-conference/wmt23-news-systems and wmt-conference/wmt24-news-systems at the commits
# the page names; RAW: the folder to write (21 file pairs, 38,748 lines).
set -euo pipefail
OPUS=$1 W23=$2 W24=$3
mkdir -p "$4" && cd "$4"
g() { git --git-dir="$1" show "HEAD:$2" > "$3"; }
S=datasets/statmt/wmt_newstest
for y in 2017 2018; do for x in zh en; do g $OPUS $S/$y/zh-en/newstest$y.$x newstest$y.zh-en.$x; done; done
for d in zh-en en-zh; do for x in zh en; do
  g $OPUS $S/2019/$d/newstest2019.$x newstest2019.$d.$x
  for b in newstest2020 newstestB2020; do g $OPUS $S/2020/$d/$b.$x $b.$d.$x; done; done; done
T=datasets/statmt/wmt21-news-systems/txt
g $OPUS $T/sources/newstest2021.zh-en.src.zh newstest2021.zh-en.zh
g $OPUS $T/references/newstest2021.zh-en.ref.A.en newstest2021.zh-en.en
for r in A B; do n=newstest2021; [ $r = B ] && n=newstestB2021
  g $OPUS $T/sources/newstest2021.en-zh.src.en $n.en-zh.en
  g $OPUS $T/references/newstest2021.en-zh.ref.$r.zh $n.en-zh.zh; done
T=datasets/statmt/wmt22-news-systems/txt
for r in A B; do n=generaltest2022; [ $r = B ] && n=generaltestB2022
  g $OPUS $T/sources/generaltest2022.zh-en.src.zh $n.zh-en.zh
  g $OPUS $T/references/generaltest2022.zh-en.ref.$r.en $n.zh-en.en
  g $OPUS $T/sources/generaltest2022.en-zh.src.en $n.en-zh.en
  g $OPUS $T/references/generaltest2022.en-zh.ref.$r.zh $n.en-zh.zh; done
for d in zh-en en-zh; do s=${d%-*}; t=${d#*-}
  g $W23 txt/sources/generaltest2023.$d.src.$s generaltest2023.$d.$s
  g $W23 txt/references/generaltest2023.$d.ref.refA.$t generaltest2023.$d.$t; done
g $W24 txt/sources/en-zh.txt wmttest2024.en-zh.en; g $W24 txt/references/en-zh.refA.txt wmttest2024.en-zh.zh
F=datasets/facebook/flores/flores101_dataset/devtest
g $OPUS $F/zho_simpl.devtest flores101-devtest.zh; g $OPUS $F/eng.devtest flores101-devtest.en
N=datasets/microsoft/ntrex/NTREX/NTREX-128
g $OPUS $N/newstest2019-ref.zho_Hans.txt ntrex128.zh; g $OPUS $N/newstest2019-src.eng.txt ntrex128.en
g $OPUS datasets/tico19/testsets/en-zh/tico19-test.zh tico19-test.zh
g $OPUS datasets/tico19/testsets/en-zh/tico19-test.en tico19-test.en   # 21 file pairs, 38,748 lines
