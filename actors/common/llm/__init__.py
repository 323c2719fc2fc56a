"""The LLM's decision language: the prompts, the decide grammar, the parser of its answers, and where
the default model lives. The reasoner speaks it and the LoRA trainer teaches it, so both read it here."""
