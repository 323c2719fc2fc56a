"""The LoRA trainer: experiences from outcomes (actors/lora/store.py, matching.py), rounds of peft training
(trainer.py), GGUF adapter versions (export.py, versions.py), the actor shell (actor.py). Jobs import from here."""

from actors.lora.core import LORA_DIR_NAME, LoraCore, RoundReport, train_offline, train_until_plateau
from actors.lora.dollars import usd_text
from actors.lora.history import history_experiences
from actors.lora.round_types import StepProgress
from actors.lora.store import ExperienceStore, read_experiences_file, write_experiences_file
from actors.lora.versions import AdapterVersion, VersionBook

__all__ = ["LORA_DIR_NAME", "AdapterVersion", "ExperienceStore", "LoraCore", "RoundReport", "StepProgress", "VersionBook",
           "history_experiences", "read_experiences_file", "train_offline", "train_until_plateau",
           "usd_text", "write_experiences_file"]
