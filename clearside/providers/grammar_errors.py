"""The words of llama.cpp's grammar failure, shared by the sampler that raises it and the provider that explains it
(grammar_first imports llama_cpp, which the provider module must not need at import)."""

GRAMMAR_FAILED = "could not compile the grammar"
