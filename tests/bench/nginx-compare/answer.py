"""The typed answer every phase serves: the runtime source's wire (DESIGN 4).

Three activations, then text deltas of a few words each; every twentieth
delta ends in a citation tag, every fortieth tag is split over two deltas,
and the last deltas carry a <memory_ops> block split in pieces, so the
citation and extraction stages do their real work. Then the consolidation
event and the terminal, whose text is the concatenation of the deltas. The
text is fixed, so every run and every proxy serves the same bytes."""
import json

WORDS = ("light from the sun reaches the air and the short blue waves "
         "scatter far more than the long red ones so the sky looks blue").split()
MEMORY = '<memory_ops>[{"op":"add","node":"user_pref","value":"likes tea"}]</memory_ops>'
MEMORY_PIECE = 10
WORDS_PER_DELTA = 3


def frame(name, data):
    return ("event: %s\ndata: %s\n\n" % (name, json.dumps(data, separators=(",", ":")))).encode()


def events(n_deltas, words=WORDS_PER_DELTA):
    """The answer as a list of frames (bytes), one per event, with n_deltas
    text deltas of 1 to words words."""
    out = [frame("ActivationEvent", {"node_id": "n%d" % k, "node_label": "sky colour", "score": 0.5,
                                     "layer": k, "source_node_id": "n%d" % (k - 1) if k else None})
           for k in range(3)]
    memory = [MEMORY[i:i + MEMORY_PIECE] for i in range(0, len(MEMORY), MEMORY_PIECE)]
    deltas = []
    i = 0
    while len(deltas) < n_deltas - len(memory):
        text = " " + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + i % words))
        if i % 20 == 19:
            tag = " [semantic:n%d]" % i
            if i % 40 == 39:
                deltas.append(text + tag[:6])
                text = tag[6:]
            else:
                text += tag
        deltas.append(text)
        i += 1
    deltas += memory
    out += [frame("TextDeltaEvent", {"text": t}) for t in deltas]
    out.append(frame("ConsolidationScheduledEvent",
                     {"report": {"scheduled": True, "queue": "inline"}, "graph_mutations": 1}))
    out.append(frame("ResponseCompleteEvent", {"text": "".join(deltas), "duration_ms": 950}))
    return out


