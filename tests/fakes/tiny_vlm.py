"""Build a tiny, randomly initialised vision-language model on disk, entirely offline.

No hub access is needed: the tokenizer is a byte-level BPE trained in memory with the
``tokenizers`` library on two sentences, the image processor is configured in code, and the model
is a LLaVA (CLIP vision tower + Llama decoder) with hidden size 32. The result loads with
``AutoProcessor`` / ``AutoModelForImageTextToText`` like any hub checkpoint, so it exercises the
real ``hf:`` loading and generation path in about a second. Its output is gibberish.

LLaVA is used rather than Qwen2-VL or SmolVLM because their processors include a video processor,
which transformers 5 cannot construct without torchvision (not a dependency here).

    python -m tests.fakes.tiny_vlm /tmp/tiny-vlm      # then: VLMClient.from_spec("hf:/tmp/tiny-vlm")
"""

from __future__ import annotations

import sys
from pathlib import Path

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<image>", "<|system|>", "<|user|>", "<|assistant|>"]

# Image placeholders become "<image>", which the LLaVA processor expands to one token per patch.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'image' %}<image>\n"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

_CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "attack move stop north south east west enemy ally unit health",
]


def build_tiny_llava(path: str | Path, seed: int = 0) -> Path:
    """Write a tiny LLaVA checkpoint (config, weights, processor, tokenizer) to ``path``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    path = Path(path)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=SPECIAL_TOKENS,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(_CORPUS, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}

    image_processor = CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=CHAT_TEMPLATE,
        image_token="<image>",
        num_additional_image_tokens=1,
    )
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=28,
            patch_size=14,
            projection_dim=32,
        ),
        text_config=LlamaConfig(
            vocab_size=bpe.get_vocab_size(),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=512,
            bos_token_id=ids["<s>"],
            eos_token_id=ids["</s>"],
            pad_token_id=ids["<pad>"],
        ),
        image_token_index=ids["<image>"],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    model.generation_config.bos_token_id = ids["<s>"]
    model.generation_config.eos_token_id = ids["</s>"]
    model.generation_config.pad_token_id = ids["<pad>"]
    model.save_pretrained(path)
    processor.save_pretrained(path)
    return path


if __name__ == "__main__":
    print(build_tiny_llava(sys.argv[1] if len(sys.argv) > 1 else "tiny-vlm"))
