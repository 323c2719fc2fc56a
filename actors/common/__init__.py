"""The project's shared vocabulary: action ids, the observation width, the instrument spec, the
step-join book and the market-data bar with its bad-record rule. Every actor may import it; it imports no actor (docs/architecture.md, the layers)."""
