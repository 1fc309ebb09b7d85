#!/usr/bin/env python3
"""A tiny llama-architecture GGUF whose hand-set weights make it a small deterministic state machine.

It talks like a Qwen3 model, so llama.cpp's server parses its reasoning and tool calls as it would a real one's:

    <think> \\n Let me think. </think> \\n\\n Hello from llama! <|im_end|>

and, when tools are offered (the tool instructions in the system prompt contain `<tool_call>`) and no tool result
is in the conversation yet, `<tool_call>` and a newline after the blank line; the server's grammar then writes the
JSON, the model prefers the tokens that close it, and `</tool_call>` is followed by the end of the turn. With thinking
switched off (the template's `<think>\\n\\n</think>\\n\\n` prefill) it answers at once.

How (64-wide residual stream, every feature one dimension of it):

- Embeddings: every token has a constant feature; the tokens the machine reads (newlines, the tags, the words it
  says) have one feature each. All other tokens carry only the constant.
- Layer 0's four attention heads each look for one tag anywhere before (or at) the current position: `<think>`,
  `</think>`, `<tool_call>`, `<tool_response>`. The query is the constant feature and the key the tag's feature,
  in the head's lowest-frequency rotary pair (angle under 0.37 rad over 65,536 positions, so position does not
  matter); when the tag is present the softmax lands on it and the head writes 1 into the tag's "seen" feature,
  when it is absent the attention spreads over values of 0.
- Layer 0's feed-forward turns "current token is a newline (or blank line)" and the seen-features into four
  decisions (begin thinking, first thinking word, call a tool, first answer word), each a unit of
  silu(k * (sum - threshold)).
- The output matrix maps each decision and each word to the next token, plus a bias row on the constant: the
  end of turn, `</tool_call>` and JSON-closing tokens (`"` before `}`) a little up, whitespace-only tokens and
  tokens containing `},` down, so the constrained JSON stays short and one call per block.
- Layer 1 is all zero (a residual pass).

What it cannot tell: "seen" means anywhere in the prompt, not in this turn. After a tool result whose turn kept
its thinking (`</think>` already in the prompt) it answers at once, without thinking; with `tool_choice: "none"`
the server still renders the tools, so it writes `<tool_call>` and a newline, then answers, all as content.

Usage: tiny-model.py --llama-cpp <llama.cpp source tree> --out <file.gguf>
The vocabulary, merges and chat template come from that tree (models/ggml-vocab-qwen2.gguf,
models/templates/Qwen-Qwen3-0.6B.jinja) and the writer is its gguf-py.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

WIDTH = 64
LAYERS = 2
HEADS = 4
HEAD_DIM = WIDTH // HEADS
FEED_FORWARD = 128
# The trained window: Claude Code's first prompt alone is about 11,700 tokens, so the tests that run it need a server
# window well above 4,096; each test still starts the server with its own `-c`.
CONTEXT = 65536
ROPE_BASE = 1e6

# Qwen3's added tokens beyond Qwen2's vocabulary file, in their slots (Qwen3's tokenizer_config.json).
QWEN3_ADDED = {
    151646: ("<|object_ref_start|>", "control"),
    151647: ("<|object_ref_end|>", "control"),
    151648: ("<|box_start|>", "control"),
    151649: ("<|box_end|>", "control"),
    151650: ("<|quad_start|>", "control"),
    151651: ("<|quad_end|>", "control"),
    151652: ("<|vision_start|>", "control"),
    151653: ("<|vision_end|>", "control"),
    151654: ("<|vision_pad|>", "control"),
    151655: ("<|image_pad|>", "control"),
    151656: ("<|video_pad|>", "control"),
    151657: ("<tool_call>", "user"),
    151658: ("</tool_call>", "user"),
    151659: ("<|fim_prefix|>", "control"),
    151660: ("<|fim_middle|>", "control"),
    151661: ("<|fim_suffix|>", "control"),
    151662: ("<|fim_pad|>", "control"),
    151663: ("<|repo_name|>", "control"),
    151664: ("<|file_sep|>", "control"),
    151665: ("<tool_response>", "user"),
    151666: ("</tool_response>", "user"),
    151667: ("<think>", "user"),
    151668: ("</think>", "user"),
}
ENDOFTEXT = 151643
IM_END = 151645
TOOL_CALL = 151657
TOOL_CALL_END = 151658
TOOL_RESPONSE = 151665
THINK = 151667
THINK_END = 151668
NEWLINE = 198  # "\n"
BLANK_LINE = 271  # "\n\n"

THINKING_WORDS = ["Let", "Ġme", "Ġthink", "."]  # "Let me think."
ANSWER_WORDS = ["Hello", "Ġfrom", "Ġllama", "!"]  # "Hello from llama!"

# Residual-stream features (dimensions).
CONSTANT = 0
IS_NEWLINE = 1  # "\n"
IS_BLANK_LINE = 15  # "\n\n"
CURRENT = {THINK: 2, THINK_END: 3, TOOL_CALL: 4, TOOL_RESPONSE: 5, TOOL_CALL_END: 6}  # "the current token is"
SEEN = {THINK: 7, THINK_END: 8, TOOL_CALL: 9, TOOL_RESPONSE: 10}  # "the tag is here or earlier"
DECIDE_THINK, DECIDE_FIRST_THOUGHT, DECIDE_TOOL_CALL, DECIDE_FIRST_ANSWER = 11, 12, 13, 14
WORD_FEATURES = 16  # one per word, thinking then answer

# Strengths (in units of the normalised constant feature, which is 3-8 after RMS norm).
RULE = 20.0  # a rule's push toward its next token
CLOSE_BIAS = 3.0  # tokens made only of `"` and `}`, and the end of turn
PUSH_DOWN = 6.0  # whitespace-only tokens and tokens containing "},"
GATE = 8.0  # the feed-forward units' slope


def bytes_to_unicode():
    """GPT-2's byte-to-character table, which Qwen's byte-level BPE spells its tokens in."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    characters = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            characters.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, characters)))


def token_text(token, decoder):
    try:
        return bytes(decoder[character] for character in token).decode("utf-8")
    except (KeyError, UnicodeDecodeError):
        return None


def read_vocab(gguf, path):
    reader = gguf.GGUFReader(path)
    tokens_field = reader.fields["tokenizer.ggml.tokens"]
    types_field = reader.fields["tokenizer.ggml.token_type"]
    merges_field = reader.fields["tokenizer.ggml.merges"]
    tokens = [bytes(tokens_field.parts[index]).decode("utf-8") for index in tokens_field.data]
    types = [int(types_field.parts[index][0]) for index in types_field.data]
    merges = [bytes(merges_field.parts[index]).decode("utf-8") for index in merges_field.data]
    return tokens, types, merges


def build_weights(tokens):
    vocab = len(tokens)
    index = {token: position for position, token in enumerate(tokens)}
    words = [index[word] for word in THINKING_WORDS + ANSWER_WORDS]
    word_feature = {token: WORD_FEATURES + position for position, token in enumerate(words)}
    assert WORD_FEATURES + len(words) <= WIDTH

    embedding = np.zeros((vocab, WIDTH), dtype=np.float32)
    embedding[:, CONSTANT] = 1.0
    embedding[NEWLINE, IS_NEWLINE] = 1.0
    embedding[BLANK_LINE, IS_BLANK_LINE] = 1.0
    for tag, feature in CURRENT.items():
        embedding[tag, feature] = 1.0
    for token, feature in word_feature.items():
        embedding[token, feature] = 1.0

    # Layer 0 attention: head h finds tag h. A tag token's input is the constant plus its own feature, so after
    # RMS norm each reads sqrt(64 / 2) = 5.66; the score is then >= 2 * 2 * 5.66 * 5.66 / 4 = 32 on a tag
    # (at least 32 * cos(0.37) = 29.8, and e^29.8 outweighs any 65,536 other positions) and 0 elsewhere.
    tag_norm = np.sqrt(WIDTH / 2)
    query = np.zeros((WIDTH, WIDTH), dtype=np.float32)
    key = np.zeros((WIDTH, WIDTH), dtype=np.float32)
    value = np.zeros((WIDTH, WIDTH), dtype=np.float32)
    attention_output = np.zeros((WIDTH, WIDTH), dtype=np.float32)
    for head, (tag, seen) in enumerate(SEEN.items()):
        slow_pair = head * HEAD_DIM + HEAD_DIM - 2  # the lowest rotary frequency
        query[slow_pair, CONSTANT] = 2.0
        key[slow_pair, CURRENT[tag]] = 2.0
        value[head * HEAD_DIM, CURRENT[tag]] = 1.0 / tag_norm
        attention_output[seen, head * HEAD_DIM] = 1.0

    # Layer 0 feed-forward: decisions on a newline. Each unit is silu(GATE * (features - threshold)) * constant;
    # inputs are all scaled alike by the norm, so the sign of a gate does not depend on it.
    gate = np.zeros((FEED_FORWARD, WIDTH), dtype=np.float32)
    up = np.zeros((FEED_FORWARD, WIDTH), dtype=np.float32)
    down = np.zeros((WIDTH, FEED_FORWARD), dtype=np.float32)
    think, think_end, tool_call, tool_response = (SEEN[tag] for tag in (THINK, THINK_END, TOOL_CALL, TOOL_RESPONSE))
    # A call starts only on the blank line after `</think>`: a single newline with `</think>` seen is the one after
    # `<tool_call>` (which the grammar, when there is one, writes past) or the start of a turn after an earlier
    # thinking turn, and is answered.
    units = [
        # (decision, {feature: weight}, threshold)
        (DECIDE_THINK, {IS_NEWLINE: 1, IS_BLANK_LINE: 1, think: -1}, 0.5),
        (DECIDE_FIRST_THOUGHT, {IS_NEWLINE: 1, IS_BLANK_LINE: 1, think: 1, think_end: -1}, 1.5),
        (DECIDE_TOOL_CALL, {IS_BLANK_LINE: 1, think_end: 1, tool_call: 1, tool_response: -1}, 2.5),
        (DECIDE_FIRST_ANSWER, {IS_BLANK_LINE: 1, think_end: 1, tool_call: -1}, 1.5),
        (DECIDE_FIRST_ANSWER, {IS_BLANK_LINE: 1, think_end: 1, tool_response: 1}, 2.5),
        (DECIDE_FIRST_ANSWER, {IS_NEWLINE: 1, think_end: 1}, 1.5),
    ]
    for unit, (decision, weights, threshold) in enumerate(units):
        for feature, weight in weights.items():
            gate[unit, feature] = GATE * weight
        gate[unit, CONSTANT] = -GATE * threshold
        up[unit, CONSTANT] = 1.0
        down[decision, unit] = 0.02

    # Output: the rules, then the bias row on the constant.
    output = np.zeros((vocab, WIDTH), dtype=np.float32)
    rules = {
        DECIDE_THINK: THINK,
        DECIDE_FIRST_THOUGHT: words[0],
        DECIDE_TOOL_CALL: TOOL_CALL,
        DECIDE_FIRST_ANSWER: words[len(THINKING_WORDS)],
        CURRENT[THINK]: NEWLINE,
        CURRENT[THINK_END]: BLANK_LINE,
        # the server's tool-call grammar begins with "<tool_call>\n" (and its lazy trigger is that); the JSON after
        # it is the grammar's to write
        CURRENT[TOOL_CALL]: NEWLINE,
        CURRENT[TOOL_CALL_END]: IM_END,
    }
    thoughts = words[: len(THINKING_WORDS)]
    answer = words[len(THINKING_WORDS) :]
    for current, following in zip(thoughts, thoughts[1:] + [THINK_END]):
        rules[word_feature[current]] = following
    for current, following in zip(answer, answer[1:] + [IM_END]):
        rules[word_feature[current]] = following
    for feature, following in rules.items():
        output[following, feature] += RULE

    decoder = {character: byte for byte, character in bytes_to_unicode().items()}
    for token_id, token in enumerate(tokens):
        text = token_text(token, decoder)
        if text is None or text == "":
            continue
        if text.strip() == "" or "}," in text:
            output[token_id, CONSTANT] -= PUSH_DOWN
        elif set(text) <= {'"', "}"}:
            # closing a string first (inside one, `}` is text), then objects
            output[token_id, CONSTANT] += CLOSE_BIAS + (2.0 if text.startswith('"') else 0.0)
    output[IM_END, CONSTANT] += CLOSE_BIAS
    output[TOOL_CALL_END, CONSTANT] += CLOSE_BIAS  # rather than `,` and a second call in the same block

    zero_square = np.zeros((WIDTH, WIDTH), dtype=np.float32)
    layers = [
        {"q": query, "k": key, "v": value, "o": attention_output, "gate": gate, "up": up, "down": down},
        {
            "q": zero_square,
            "k": zero_square,
            "v": zero_square,
            "o": zero_square,
            "gate": np.zeros((FEED_FORWARD, WIDTH), dtype=np.float32),
            "up": np.zeros((FEED_FORWARD, WIDTH), dtype=np.float32),
            "down": np.zeros((WIDTH, FEED_FORWARD), dtype=np.float32),
        },
    ]
    return embedding, layers, output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llama-cpp", required=True, type=Path, help="a llama.cpp source tree (for gguf-py, vocab, template)")
    parser.add_argument("--out", required=True, type=Path)
    arguments = parser.parse_args()
    tree = arguments.llama_cpp
    sys.path.insert(0, str(tree / "gguf-py"))
    import gguf

    tokens, types, merges = read_vocab(gguf, tree / "models" / "ggml-vocab-qwen2.gguf")
    for token_id, (text, kind) in QWEN3_ADDED.items():
        tokens[token_id] = text
        types[token_id] = int(gguf.TokenType.CONTROL if kind == "control" else gguf.TokenType.USER_DEFINED)
    template = (tree / "models" / "templates" / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")

    embedding, layers, output = build_weights(tokens)

    writer = gguf.GGUFWriter(str(arguments.out), "llama")
    writer.add_name("parley-tiny-qwen3")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(ROPE_BASE)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(ENDOFTEXT)
    writer.add_eos_token_id(IM_END)
    writer.add_pad_token_id(ENDOFTEXT)
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)

    half = lambda array: array.astype(np.float16)  # noqa: E731
    ones = np.ones(WIDTH, dtype=np.float32)
    writer.add_tensor("token_embd.weight", half(embedding))
    for number, layer in enumerate(layers):
        prefix = f"blk.{number}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", ones)
        writer.add_tensor(f"{prefix}.attn_q.weight", half(layer["q"]))
        writer.add_tensor(f"{prefix}.attn_k.weight", half(layer["k"]))
        writer.add_tensor(f"{prefix}.attn_v.weight", half(layer["v"]))
        writer.add_tensor(f"{prefix}.attn_output.weight", half(layer["o"]))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", ones)
        writer.add_tensor(f"{prefix}.ffn_gate.weight", half(layer["gate"]))
        writer.add_tensor(f"{prefix}.ffn_up.weight", half(layer["up"]))
        writer.add_tensor(f"{prefix}.ffn_down.weight", half(layer["down"]))
    writer.add_tensor("output_norm.weight", ones)
    writer.add_tensor("output.weight", half(output))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
