"""A GPT-2-small-sized decoder (nanoGPT's shape: 12 layers, 12 heads, 768 wide, 1024 positions,
the GPT-2 vocabulary, tied embeddings: about 124M parameters), built in code with random weights,
so the DDP step needs nothing downloaded. Only what a training step needs: no generation."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


@dataclass(frozen=True)
class GptShape:
    layers: int = 12
    heads: int = 12
    width: int = 768
    positions: int = 1024
    vocabulary: int = 50257


GPT2_SMALL = GptShape()


class Block(nn.Module):
    def __init__(self, shape: GptShape) -> None:
        super().__init__()
        self.heads = shape.heads
        self.ln_1 = nn.LayerNorm(shape.width)
        self.attn = nn.Linear(shape.width, 3 * shape.width)
        self.proj = nn.Linear(shape.width, shape.width)
        self.ln_2 = nn.LayerNorm(shape.width)
        self.fc = nn.Linear(shape.width, 4 * shape.width)
        self.fc_proj = nn.Linear(4 * shape.width, shape.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.fc_proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, shape: GptShape = GPT2_SMALL) -> None:
        super().__init__()
        self.shape = shape
        self.wte = nn.Embedding(shape.vocabulary, shape.width)
        self.wpe = nn.Embedding(shape.positions, shape.width)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.ln_f = nn.LayerNorm(shape.width)
        self.head = nn.Linear(shape.width, shape.vocabulary, bias=False)
        self.head.weight = self.wte.weight  # tied, as GPT-2
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * shape.layers))

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[1]
        x = self.wte(tokens) + self.wpe(torch.arange(t, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def parameter_count(model: nn.Module) -> int:
    """Parameters DDP all-reduces (a tied weight counts once, as DDP sees it once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
