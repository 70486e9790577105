"""`cppdb models fetch NAME`: the full models' own download calls, for users with internet.

Nothing in cppdb downloads at run time; this command is the one explicit exception, and on a
machine without access to the model hubs it fails quickly with a message saying how to copy
the model in by hand instead.
"""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cppdb.errors import BackendUnavailableError, ModelFetchError
from cppdb.io import user_cache_dir


@dataclass(frozen=True)
class ModelSource:
    name: str
    kind: str          # "stanza" | "huggingface"
    ident: str         # stanza language code or hub repository id
    used_for: str
    config_key: str    # where to point cppdb at the downloaded model


MODELS: dict[str, ModelSource] = {m.name: m for m in [
    ModelSource("stanza-zh", "stanza", "zh-hans", "Chinese POS + constituency (zh_backend=stanza), UD parse",
                "annotate.stanza_dir"),
    ModelSource("stanza-en", "stanza", "en", "English POS/lemma/deps/constituency (en_backend=stanza)",
                "annotate.stanza_dir"),
    ModelSource("mbert", "huggingface", "bert-base-multilingual-cased",
                "SimAlign word aligner", "align_words.simalign.model_dir"),
    ModelSource("opus-mt-zh-en", "huggingface", "Helsinki-NLP/opus-mt-zh-en",
                "attention (SHIFT-ATT) word aligner", "align_words.attention.model_dir"),
    ModelSource("bert-base-chinese", "huggingface", "bert-base-chinese",
                "masked-LM feature (also compression.bert_dir for BERT-align)", "features.lm_model_path"),
    ModelSource("sbert-multilingual", "huggingface",
                "sentence-transformers/paraphrase-xlm-r-multilingual-v1",
                "SentenceBERT cosine (features, sentence alignment; evaluate.second_model_path)",
                "embed.model_path"),
]}

_HOSTS = {"huggingface": "huggingface.co", "stanza": "huggingface.co"}


def _reachable(host: str, timeout: float = 4.0) -> bool:
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def default_target(source: ModelSource) -> Path:
    if source.kind == "stanza":
        return Path(os.environ.get("STANZA_RESOURCES_DIR", Path.home() / "stanza_resources"))
    return user_cache_dir() / "models" / source.name


def fetch_model(name: str, target: Path | None = None) -> Path:
    """Download model ``name`` with its library's own call; return where it went."""
    source = MODELS.get(name)
    if source is None:
        raise ModelFetchError(f"unknown model '{name}'",
                              hint=f"known models: {', '.join(MODELS)}")
    target = Path(target) if target else default_target(source)
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    if offline or not _reachable(_HOSTS[source.kind]):
        why = "HF_HUB_OFFLINE=1 is set" if offline else "the model hub cannot be reached from here"
        raise ModelFetchError(
            f"cannot download '{name}' ({source.ident}): {why}",
            hint=(f"on a machine with internet run `cppdb models fetch {name} --target DIR`, "
                  f"copy DIR here and set {source.config_key} (e.g. --set {source.config_key}=DIR)"))
    if source.kind == "stanza":
        try:
            import stanza
        except ImportError as exc:
            raise BackendUnavailableError("stanza is not installed",
                                          hint="pip install 'cppdb[stanza]'") from exc
        stanza.download(source.ident, model_dir=str(target))
        return target
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise BackendUnavailableError("huggingface_hub is not installed",
                                      hint="pip install 'cppdb[neural]'") from exc
    snapshot_download(repo_id=source.ident, local_dir=str(target))
    return target
