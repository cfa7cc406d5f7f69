"""Architectures of common open models, for `plan decode` (weights and KV-cache bytes per token).

Dimensions are those of each model's published Hugging Face config.json (num_hidden_layers,
hidden_size, intermediate_size, num_attention_heads, num_key_value_heads, vocab_size,
max_position_embeddings, sliding_window), as listed, with links to the configs, in public model
tables (e.g. the LLM table citing https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
and its siblings) and, for Mistral-7B, in mistralai's params.json (dim 4096, n_layers 32, head_dim 128,
hidden_dim 14336, n_heads 32, n_kv_heads 8, window 4096, vocab 32000):

  Llama-2-7B   https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json
  Llama-2-13B  https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json
  Llama-2-70B  https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json
  Llama-3-8B   https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json
  Llama-3-70B  https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json
  Mistral-7B   https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
  Qwen2-72B    https://huggingface.co/Qwen/Qwen2-72B/blob/main/config.json

The parameter count is computed from the dimensions, and the tests check it against each model's
published size (6.74B, 13.0B, 69.0B, 8.03B, 70.6B, 7.24B, 72.7B): a wrong dimension would show.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    key: str
    name: str
    layers: int
    hidden: int
    ffn: int  # intermediate_size (gated MLP: gate, up and down projections)
    heads: int
    kv_heads: int
    vocab: int
    context: int  # max_position_embeddings: the default context of a plan
    head_dim: int = 0  # 0: hidden / heads
    tied_embeddings: bool = False
    qkv_bias: bool = False
    kv_window: int = 0  # sliding-window attention: the KV cache holds at most this many tokens

    @property
    def dim(self) -> int:
        return self.head_dim or self.hidden // self.heads

    def params(self) -> float:
        q = self.hidden * self.heads * self.dim
        kv = 2 * self.hidden * self.kv_heads * self.dim
        o = self.heads * self.dim * self.hidden
        bias = (self.heads + 2 * self.kv_heads) * self.dim if self.qkv_bias else 0
        mlp = 3 * self.hidden * self.ffn
        norms = 2 * self.hidden
        embed = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return float(self.layers * (q + kv + o + bias + mlp + norms) + self.hidden + embed)


MODELS: dict[str, Model] = {
    m.key: m
    for m in [
        Model("llama-2-7b", "Llama-2-7B", 32, 4096, 11008, 32, 32, 32000, 4096),
        Model("llama-2-13b", "Llama-2-13B", 40, 5120, 13824, 40, 40, 32000, 4096),
        Model("llama-2-70b", "Llama-2-70B", 80, 8192, 28672, 64, 8, 32000, 4096),
        Model("llama-3-8b", "Llama-3-8B", 32, 4096, 14336, 32, 8, 128256, 8192),
        Model("llama-3-70b", "Llama-3-70B", 80, 8192, 28672, 64, 8, 128256, 8192),
        Model("mistral-7b", "Mistral-7B (v0.1)", 32, 4096, 14336, 32, 8, 32000, 4096, kv_window=4096),
        Model("qwen2-72b", "Qwen2-72B", 80, 8192, 29568, 64, 8, 152064, 32768, qkv_bias=True),
    ]
}
