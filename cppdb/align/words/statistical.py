"""Statistical (IBM-model) aligners — GIZA++'s role in the paper.

Both aligners train a zh→en and an en→zh model on the whole corpus, decode Viterbi links in
both directions, and turn them into one link-probability matrix per pair:

    P = viterbi_weight · (A_fwd + A_bwd) / 2 + (1 − viterbi_weight) · sqrt(post_fwd · post_bwd)

— direction agreement (1 where both directions link, ½ where one does) softened by lexical
posteriors with a diagonal prior.  Both keep the lexical tables p(e|f) and p(f|e).

* ``ThotAligner`` — sil-thot (LGPL): IBM1→HMM(→IBM4), fast_align, or thot's eflomal port.
* ``EflomalAligner`` — the ``eflomal`` package (GPL-3, optional extra ``cppdb[eflomal]``);
  eflomal trains and aligns in one run.
Pairs that were part of the training corpus reuse their training alignments (``align_trained``)
instead of being decoded again — that is how ``align_tokenized`` uses them.
"""
from __future__ import annotations

import importlib
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cppdb.align.words.base import (CHUNK_PAIRS, TokenPair, WordAligner, cell_grid,
                                    check_pairs)
from cppdb.align.words.lexical import LexicalTable, directional_posteriors
from cppdb.defaults import toml_defaults
from cppdb.errors import BadInputError, ConfigError, RunStateError
from cppdb.progress import console
from cppdb.readers.pharaoh import parse_links

_EFLOMAL = toml_defaults("align_words.eflomal")
_THOT = toml_defaults("align_words.thot")

THOT_MODELS = ("ibm1", "hmm", "ibm4", "fast_align", "eflomal")
#: thot vocabulary indices 0-2 are NULL, UNKNOWN_WORD and <UNUSED_WORD>
_THOT_SPECIAL = 3


class _TwoDirectionAligner(WordAligner):
    """Shared matrix construction from directional links and lexical tables."""

    needs_training: ClassVar[bool] = True

    def __init__(self, *, lowercase: bool = True, viterbi_weight: float = 0.5,
                 diagonal_tension: float = 4.0, lex_min_prob: float = 0.001) -> None:
        if not 0.0 <= viterbi_weight <= 1.0:
            raise ConfigError(f"viterbi_weight must be in [0, 1], got {viterbi_weight}")
        self.lowercase = lowercase
        self.viterbi_weight = viterbi_weight
        self.diagonal_tension = diagonal_tension
        self.lex_min_prob = lex_min_prob
        self.lex_en_given_zh: LexicalTable | None = None
        self.lex_zh_given_en: LexicalTable | None = None

    def _norm(self, pairs: Sequence[TokenPair]) -> list[tuple[list[str], list[str]]]:
        if self.lowercase:
            return [([t.lower() for t in z], [t.lower() for t in e]) for z, e in pairs]
        return [(list(z), list(e)) for z, e in pairs]

    def _require_trained(self) -> tuple[LexicalTable, LexicalTable]:
        if self.lex_en_given_zh is None or self.lex_zh_given_en is None:
            raise RunStateError(f"aligner '{self.name}' is not trained",
                                hint="call train(pairs) before align(pairs)")
        return self.lex_en_given_zh, self.lex_zh_given_en

    def directional_links(self, pairs: Sequence[TokenPair]
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Boolean ``|zh| x |en|`` Viterbi links of the zh→en and (transposed) en→zh model."""
        raise NotImplementedError

    def training_links(self, pairs: Sequence[TokenPair], start: int
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Directional links of training pairs ``start …`` as found while training."""
        raise NotImplementedError

    def align_trained(self, pairs: Sequence[TokenPair], start: int) -> list[np.ndarray]:
        """Matrices of ``pairs``, which are the training pairs ``start … start+len-1``:
        their training alignments are reused, nothing is decoded again."""
        check_pairs(pairs)
        self._require_trained()
        forward, backward = self.training_links(pairs, start)
        return self._matrices(pairs, list(zip(forward, backward)))

    def align(self, pairs: Sequence[TokenPair], *,
              en_lemmas: Sequence[Sequence[str]] | None = None) -> list[np.ndarray]:
        check_pairs(pairs)
        self._require_trained()
        forward, backward = self.directional_links(pairs)
        links = list(zip(forward, backward))
        chunks = [(pairs[k:k + CHUNK_PAIRS], links[k:k + CHUNK_PAIRS])
                  for k in range(0, len(pairs), CHUNK_PAIRS)]
        return [m for chunk, chunk_links in chunks for m in self._matrices(chunk, chunk_links)]

    def _matrices(self, pairs: Sequence[TokenPair],
                  links: list[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        e_given_z, z_given_e = self._require_trained()
        forward = [f for f, _ in links]
        backward = [b for _, b in links]
        grid = cell_grid(pairs)
        norm = self._norm(pairs)
        zh_flat = [t for z, _ in norm for t in z]
        en_flat = [t for _, e in norm for t in e]
        zh_in_e = e_given_z.source_ids(zh_flat)[grid.zh_token]
        en_in_e = e_given_z.target_ids(en_flat)[grid.en_token]
        en_in_z = z_given_e.source_ids(en_flat)[grid.en_token]
        zh_in_z = z_given_e.target_ids(zh_flat)[grid.zh_token]
        p_e_f = e_given_z.lookup(zh_in_e, en_in_e)
        p_f_e = z_given_e.lookup(en_in_z, zh_in_z)
        null_en = _null_mass(e_given_z, e_given_z.target_ids(en_flat))
        null_zh = _null_mass(z_given_e, z_given_e.target_ids(zh_flat))
        post_f, post_b = directional_posteriors(grid, p_e_f, p_f_e, null_en, null_zh,
                                                self.diagonal_tension)
        agree = (np.concatenate([m.ravel() for m in forward]).astype(np.float64)
                 + np.concatenate([m.ravel() for m in backward])) / 2.0
        prob = (self.viterbi_weight * agree
                + (1.0 - self.viterbi_weight) * np.sqrt(post_f * post_b))
        return grid.split(np.clip(prob, 0.0, 1.0))

    def lexical_frames(self):
        """(p(e|f) as columns zh, en, prob;  p(f|e) as columns zh, en, prob)."""
        e_given_z, z_given_e = self._require_trained()
        return (e_given_z.to_frame("zh", "en", self.lex_min_prob),
                z_given_e.to_frame("en", "zh", self.lex_min_prob).select("zh", "en", "prob"))


def _null_mass(table: LexicalTable, target_ids: np.ndarray) -> np.ndarray:
    known = target_ids >= 0
    out = np.full(target_ids.shape[0], 1e-7)
    out[known] = table.null_probs[target_ids[known]]
    return out


class ThotAligner(_TwoDirectionAligner):
    """sil-thot IBM models trained in both directions (offline default)."""

    name = "thot"
    requires = (("sil-thot", "thot"),)
    install_hint = "pip install sil-thot"
    description = "IBM1/HMM/IBM4/fast_align/eflomal-port statistical aligner (sil-thot, LGPL)"

    def __init__(self, *, model: str = _THOT["model"],
                 ibm1_iterations: int = _THOT["ibm1_iterations"],
                 hmm_iterations: int = _THOT["hmm_iterations"],
                 ibm4_iterations: int = _THOT["ibm4_iterations"],
                 fast_align_iterations: int = _THOT["fast_align_iterations"],
                 eflomal_iterations: Sequence[int] = _THOT["eflomal_iterations"],
                 eflomal_decode: Sequence[int] = _THOT["eflomal_decode"], seed: int = 1,
                 deterministic: bool = _THOT["deterministic"],
                 null_prob: float = _THOT["null_prob"], threads: int = _THOT["threads"],
                 **common: Any) -> None:
        super().__init__(**common)
        if model not in THOT_MODELS:
            raise ConfigError(f"unknown thot model '{model}'",
                              hint=f"choose one of: {', '.join(THOT_MODELS)}")
        self.model = model
        self.iterations = {"ibm1": ibm1_iterations, "hmm": hmm_iterations,
                           "ibm4": ibm4_iterations, "fast_align": fast_align_iterations}
        if len(eflomal_iterations) != 3 or any(int(n) < 0 for n in eflomal_iterations):
            raise ConfigError("eflomal_iterations must be three counts [ibm1, hmm, fertility]",
                              hint="[0, 0, 0] lets the model scale them to the corpus size")
        self.eflomal_iterations = tuple(int(n) for n in eflomal_iterations)
        decode = tuple(int(n) for n in eflomal_decode)
        if len(decode) != 3 or decode[0] < 1 or decode[1] < 1 or not 0 <= decode[2] < decode[1]:
            raise ConfigError(f"eflomal_decode must be [samplers, sweeps, burn_in] with "
                              f"samplers ≥ 1, sweeps ≥ 1 and 0 ≤ burn_in < sweeps, not "
                              f"{list(eflomal_decode)}", hint="the default is [1, 8, 2]")
        self.eflomal_decode = decode
        self.seed = seed
        self.deterministic = deterministic
        self.null_prob = null_prob
        self.threads = max(1, threads)
        self._models: tuple[Any, Any] | None = None
        self._n_trained = 0
        # training links brought back from worker processes (None: read them off the models)
        self._training: tuple[list[_Compact], list[_Compact]] | None = None

    def signature(self) -> str:
        decode = ("|decode:" + ",".join(map(str, self.eflomal_decode))
                  if self.model == "eflomal" else "")
        return f"{self.name}[{self.version()}|model:{self.model}|seed:{self.seed}{decode}]"

    def _set_decoding(self, model: Any) -> Any:
        """Sampling sweeps for pairs decoded after training (eflomal's only; the training
        pairs keep their training links)."""
        if self.model == "eflomal":
            model.set_decode_params(*self.eflomal_decode)
        return model

    def _chain(self) -> list[tuple[Any, int | None]]:
        """The model cascade, each model initialised from the previous one (GIZA++ style)."""
        ta = importlib.import_module("thot.alignment")
        if self.model == "eflomal":
            model = ta.EflomalAlignmentModel()
            model.seed = self.seed
            model.deterministic = self.deterministic
            model.p0 = self.null_prob
            if any(self.eflomal_iterations):
                model.set_iterations(*self.eflomal_iterations)
            return [(model, None)]
        if self.model == "fast_align":
            return [(ta.FastAlignModel(), self.iterations["fast_align"])]
        ibm1 = ta.Ibm1AlignmentModel()
        chain: list[tuple[Any, int | None]] = [(ibm1, self.iterations["ibm1"])]
        if self.model in ("hmm", "ibm4"):
            hmm = ta.HmmAlignmentModel(ibm1)
            chain.append((hmm, self.iterations["hmm"]))
            if self.model == "ibm4":
                chain.append((ta.Ibm4AlignmentModel(hmm), self.iterations["ibm4"]))
        return chain

    def _train_direction(self, sources: list[list[str]], targets: list[list[str]]) -> Any:
        chain = self._chain()
        last = chain[-1][0]
        for src, trg in zip(sources, targets):
            last.add_sentence_pair(src, trg)
        # keep the final model's training alignments: pairs that were in the training
        # corpus are then not decoded a second time (eflomal would re-sample them)
        last.emit_training_alignments = True
        for model, iterations in chain:
            model.start_training()
            count = model.scheduled_iterations if iterations is None else iterations
            for _ in range(count):
                model.train()
            model.end_training()
        return last

    def train(self, pairs: Sequence[TokenPair]) -> None:
        check_pairs(pairs, where="training data")
        if not pairs:
            raise BadInputError("no training pairs for the statistical aligner")
        self.check()
        norm = self._norm(pairs)
        zh = [z for z, _ in norm]
        en = [e for _, e in norm]
        self._training = None
        models = self._train_in_workers(zh, en) if self._use_workers(len(norm)) else None
        if models is None:
            with ThreadPoolExecutor(self.threads) as pool:
                forward = pool.submit(self._train_direction, zh, en)
                backward = pool.submit(self._train_direction, en, zh)
                models = (forward.result(), backward.result())
        self._models = tuple(self._set_decoding(m) for m in models)
        self._n_trained = len(norm)
        self.lex_en_given_zh = _thot_table(models[0])
        self.lex_zh_given_en = _thot_table(models[1])

    def _use_workers(self, n_pairs: int) -> bool:
        # thot's calls hold the GIL, so two threads train one direction after the other; two
        # processes train them side by side
        return self.threads >= 2 and n_pairs >= PROCESS_MIN_PAIRS

    def _train_in_workers(self, zh: list[list[str]], en: list[list[str]]
                          ) -> tuple[Any, Any] | None:
        """Both directions in two worker processes; the models come back as thot's files
        and the training links as index arrays.  None (and a note) if a worker fails.

        The workers are ``python -m cppdb.align.words.thot_worker`` subprocesses rather than
        a multiprocessing pool: spawn and forkserver children import the caller's
        ``__main__``, which re-runs an unguarded user script inside each worker."""
        import pickle
        import subprocess

        package_root = Path(__file__).resolve().parents[3]   # the directory holding cppdb/
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(package_root)]
            + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
        with tempfile.TemporaryDirectory(prefix="cppdb-thot-") as tmp:
            jobs = []
            try:
                for k, (sources, targets) in enumerate(((zh, en), (en, zh))):
                    task, result, log = (Path(tmp) / f"{name}{k}" for name in
                                         ("task", "result", "log"))
                    task.write_bytes(pickle.dumps((self, sources, targets), protocol=5))
                    with open(log, "wb") as err:
                        jobs.append((subprocess.Popen(
                            [sys.executable, "-m", "cppdb.align.words.thot_worker",
                             str(task), str(result)], stdout=subprocess.DEVNULL, stderr=err,
                            env=env), result, log))
                outputs = []
                for process, result, log in jobs:
                    if process.wait() != 0:
                        lines = log.read_text("utf-8", "replace").strip().splitlines()
                        raise RuntimeError(lines[-1] if lines else
                                           f"worker exited with {process.returncode}")
                    outputs.append(pickle.loads(result.read_bytes()))
            except (OSError, RuntimeError, pickle.UnpicklingError) as exc:
                for process, _, _ in jobs:
                    process.kill()
                    process.wait()

                console().print(f"[yellow]thot: training in worker processes failed ({exc}); "
                                "training in this process[/yellow]")
                return None
        (forward_files, forward_links), (backward_files, backward_links) = outputs
        self._training = (forward_links, backward_links)
        return self._load_model(forward_files), self._load_model(backward_files)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable, so a trained aligner can be broadcast to Spark executors: the thot
        models travel as the files thot writes for them.  Training alignments do not travel
        (``align_trained`` is for the process that trained)."""
        state = self.__dict__.copy()
        state["_training"] = None
        if self._models is not None:
            state["_models"] = tuple(_model_files(m) for m in self._models)
            state["_n_trained"] = 0
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        files = state.get("_models")
        self.__dict__.update(state)
        if files is not None:
            self._models = tuple(self._load_model(f) for f in files)

    def _load_model(self, files: dict[str, bytes]) -> Any:
        model = type(self._chain()[-1][0])()
        with tempfile.TemporaryDirectory(prefix="cppdb-thot-") as tmp:
            for name, data in files.items():
                Path(tmp, name).write_bytes(data)
            if not model.load(os.path.join(tmp, _MODEL_PREFIX)):
                raise RunStateError("a broadcast thot model could not be loaded",
                                    hint="the executors need the same sil-thot version as "
                                         "the driver")
        if self.model == "eflomal":
            model.seed, model.deterministic = self.seed, self.deterministic
        return self._set_decoding(model)

    def _trained_models(self) -> tuple[Any, Any]:
        if self._models is None:
            raise RunStateError("aligner 'thot' is not trained",
                                hint="call train(pairs) before align(pairs)")
        return self._models

    def directional_links(self, pairs: Sequence[TokenPair]
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Viterbi links decoded with the trained models (for pairs outside training)."""
        forward_model, backward_model = self._trained_models()
        norm = self._norm(pairs)
        zh = [z for z, _ in norm]
        en = [e for _, e in norm]
        forward = [m.to_numpy() for _, m in forward_model.get_best_alignments(zh, en)]
        backward = [m.to_numpy().T for _, m in backward_model.get_best_alignments(en, zh)]
        return (_fit_shapes([f.astype(bool) for f in forward], norm),
                _fit_shapes([b.astype(bool) for b in backward], norm))

    def training_links(self, pairs: Sequence[TokenPair], start: int
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        forward_model, backward_model = self._trained_models()
        _check_range(start, len(pairs), self._n_trained)
        norm = self._norm(pairs)
        if self._training is not None:
            forward = [_expand(c) for c in self._training[0][start:start + len(norm)]]
            backward = [_expand(c).T for c in self._training[1][start:start + len(norm)]]
        else:
            forward = [forward_model.get_training_alignment(start + k)[1].to_numpy()
                       for k in range(len(norm))]
            backward = [backward_model.get_training_alignment(start + k)[1].to_numpy().T
                        for k in range(len(norm))]
        return (_fit_shapes([f.astype(bool) for f in forward], norm),
                _fit_shapes([b.astype(bool) for b in backward], norm))


_MODEL_PREFIX = "model"
#: from this many training pairs on, the two directions train in two worker processes
#: (below it a worker's start-up, ~1 s, costs more than the parallel training saves)
PROCESS_MIN_PAIRS = 4000
#: a training alignment kept compactly: its matrix shape and the flat indices of its links
_Compact = tuple[tuple[int, int], np.ndarray]


def _compact(matrix: np.ndarray) -> _Compact:
    return (int(matrix.shape[0]), int(matrix.shape[1])), \
        np.flatnonzero(matrix).astype(np.int32)


def _expand(compact: _Compact) -> np.ndarray:
    shape, flat = compact
    matrix = np.zeros(shape, dtype=bool)
    matrix.flat[flat] = True
    return matrix


def _train_direction_in_worker(aligner: "ThotAligner", sources: list[list[str]],
                               targets: list[list[str]]
                               ) -> tuple[dict[str, bytes], list[_Compact]]:
    """One direction trained in a worker process: the model's files and its training links."""
    model = aligner._train_direction(sources, targets)
    links = [_compact(model.get_training_alignment(k)[1].to_numpy())
             for k in range(len(sources))]
    return _model_files(model), links


def _model_files(model: Any) -> dict[str, bytes]:
    """A trained thot model as the bytes of the files ``model.print`` writes."""
    with tempfile.TemporaryDirectory(prefix="cppdb-thot-") as tmp:
        if not model.print(os.path.join(tmp, _MODEL_PREFIX)):
            raise RunStateError("thot could not write its trained model",
                                hint=f"check free space in {tempfile.gettempdir()}")
        return {path.name: path.read_bytes() for path in sorted(Path(tmp).iterdir())}


def _check_range(start: int, count: int, n_trained: int) -> None:
    if start < 0 or start + count > n_trained:
        raise RunStateError(f"training pairs {start}..{start + count - 1} requested but only "
                            f"{n_trained} pairs were trained",
                            hint="align_trained takes pairs of the training corpus only")


#: repairs made to an aligner's output, by kind (counted and said on stderr, never silent)
REPAIRS: Counter[str] = Counter()


def _note_repairs(what: str, count: int) -> None:
    if count:
        REPAIRS[what] += count
        sys.stderr.write(f"note: {what}: {count}\n")


def _fit_shapes(mats: list[np.ndarray], norm: list[tuple[list[str], list[str]]]
                ) -> list[np.ndarray]:
    """Guard against a model returning a matrix of another shape (e.g. a length cap)."""
    out = []
    _note_repairs("thot alignment matrices of another shape than their sentence pair "
                  "(padded/truncated to it)",
                  sum(m.shape != (len(z), len(e)) for m, (z, e) in zip(mats, norm)))
    for mat, (z, e) in zip(mats, norm):
        if mat.shape != (len(z), len(e)):
            fixed = np.zeros((len(z), len(e)), dtype=bool)
            r, c = min(mat.shape[0], len(z)), min(mat.shape[1], len(e))
            fixed[:r, :c] = mat[:r, :c]
            mat = fixed
        out.append(mat)
    return out


def _thot_table(model: Any) -> LexicalTable:
    """Export a thot model's p(target|source) into a LexicalTable (special words dropped)."""
    source_vocab = [model.get_src_word(k) for k in range(model.src_vocab_size)]
    target_vocab = [model.get_trg_word(k) for k in range(model.trg_vocab_size)]
    src_ids: list[int] = []
    trg_ids: list[int] = []
    probs: list[float] = []
    for s in range(_THOT_SPECIAL, model.src_vocab_size):
        for t, p in model.get_translations(s, 1e-4):
            if t >= _THOT_SPECIAL:
                src_ids.append(s)
                trg_ids.append(t)
                probs.append(p)
    null_probs = np.full(len(target_vocab), 1e-7)
    for t, p in model.get_translations(0, 1e-7):
        null_probs[t] = p
    return LexicalTable.from_arrays(source_vocab, target_vocab, np.asarray(src_ids, np.int64),
                                    np.asarray(trg_ids, np.int64), np.asarray(probs),
                                    null_probs)


class EflomalAligner(_TwoDirectionAligner):
    """The eflomal package (Bayesian IBM1→HMM→fertility, Gibbs sampling). GPL-3, optional."""

    name = "eflomal"
    requires = (("eflomal", "eflomal"),)
    install_hint = "pip install 'cppdb[eflomal]'   (eflomal is GPL-3, hence an optional extra)"
    description = "eflomal Bayesian HMM+fertility aligner (GPL-3 optional extra)"

    def __init__(self, *, n_samplers: int = _EFLOMAL["n_samplers"],
                 null_prior: float = _EFLOMAL["null_prior"], model: int = _EFLOMAL["model"],
                 **common: Any) -> None:
        super().__init__(**common)
        self.n_samplers = n_samplers
        self.null_prior = null_prior
        self.model = model
        self._corpus: list[tuple[list[str], list[str]]] = []
        self._links: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])

    def train(self, pairs: Sequence[TokenPair]) -> None:
        """Sample alignments of the corpus (eflomal trains and aligns in one run)."""
        check_pairs(pairs, where="training data")
        self.check()
        self._corpus = self._norm(pairs)
        forward, backward = self._run(self._corpus)
        self._links = (forward, backward)
        self._set_tables(self._corpus, forward, backward)

    def _run(self, norm: list[tuple[list[str], list[str]]]
             ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        eflomal = importlib.import_module("eflomal")
        aligner = eflomal.Aligner(model=self.model, n_samplers=self.n_samplers,
                                  null_prior=self.null_prior)
        with tempfile.TemporaryDirectory(prefix="cppdb-eflomal-") as tmp:
            fwd_path = os.path.join(tmp, "fwd")
            rev_path = os.path.join(tmp, "rev")
            aligner.align([" ".join(z) for z, _ in norm], [" ".join(e) for _, e in norm],
                          links_filename_fwd=fwd_path, links_filename_rev=rev_path, quiet=True)
            forward = _read_pharaoh(fwd_path, norm, reverse=False)
            backward = _read_pharaoh(rev_path, norm, reverse=False)
        return forward, backward

    def _set_tables(self, norm, forward, backward) -> None:
        zh_words: list[str] = []
        en_words: list[str] = []
        for (z, e), f, b in zip(norm, forward, backward):
            ii, jj = np.nonzero(f | b)
            zh_words.extend(z[i] for i in ii)
            en_words.extend(e[j] for j in jj)
        self.lex_en_given_zh = LexicalTable.from_links(zh_words, en_words)
        self.lex_zh_given_en = LexicalTable.from_links(en_words, zh_words)

    def directional_links(self, pairs: Sequence[TokenPair]
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if self.lex_en_given_zh is None:
            raise RunStateError("aligner 'eflomal' is not trained",
                                hint="call train(pairs) before align(pairs)")
        norm = self._norm(pairs)
        forward, backward = self._run(self._corpus + norm)
        skip = len(self._corpus)
        return forward[skip:], backward[skip:]

    def training_links(self, pairs: Sequence[TokenPair], start: int
                       ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The training run's links (eflomal samples corpus alignments while training)."""
        _check_range(start, len(pairs), len(self._corpus))
        stop = start + len(pairs)
        return self._links[0][start:stop], self._links[1][start:stop]


def _read_pharaoh(path: str, norm: list[tuple[list[str], list[str]]], reverse: bool
                  ) -> list[np.ndarray]:
    """eflomal's output: one line of ``i-j`` (source-target, 0-based) per sentence pair."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    if len(lines) != len(norm):
        raise BadInputError(f"eflomal wrote {len(lines)} alignment lines for {len(norm)} pairs")
    mats = []
    outside = 0
    for number, (line, (z, e)) in enumerate(zip(lines, norm), start=1):
        mat = np.zeros((len(z), len(e)), dtype=bool)
        for i, j in parse_links(line, f"eflomal output line {number}"):
            if reverse:
                i, j = j, i
            if 0 <= i < len(z) and 0 <= j < len(e):
                mat[i, j] = True
            else:
                outside += 1
        mats.append(mat)
    _note_repairs("eflomal links outside their sentence pair (dropped)", outside)
    return mats
