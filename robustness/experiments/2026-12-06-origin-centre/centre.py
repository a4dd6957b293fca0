"""Where the latent-2 VAE's cloud of codes is centred, measured on three sets of digits.

further/vae.md claims 'the whole cloud sits around the origin' as max_k |mean of the held-out
digits' codes, dimension k| < 0.3. This retrains ``vae.LATENT2`` under fresh seeds and prints
that centre for the 297 held-out digits (the figure's cloud), the 1,500 training digits, and all
1,797, to see how much of the claim's value is which digits were held out.

    PYTHONPATH=src python robustness/experiments/2026-12-06-origin-centre/centre.py 0 12

(the first and last-but-one retraining index; each retraining takes about 2 s on one thread).
"""

import os
import sys

import torch

from rec11 import data, vae


def centre(codes: torch.Tensor) -> float:
    """The claim's value: the largest |mean| over the latent dimensions."""
    return codes.mean(0).abs().max().item()


def main(first: int, stop: int) -> None:
    torch.set_num_threads(1)
    print("retraining held_out_297 training_1500 all_1797")
    for index in range(first, stop):
        os.environ["REC11_SEED"] = str(1000 + index)  # a fresh seed: the split and the training move
        X_train, _, X_test, _ = data.digits_split()
        model = vae.make(vae.LATENT2)
        vae.train(model, X_train)
        model.eval()
        held_out, _ = vae.encode(model, X_test)  # (297, 2) mean codes
        training, _ = vae.encode(model, X_train)  # (1500, 2)
        every = torch.cat([training, held_out])  # (1797, 2)
        print(index, *(f"{centre(codes):.3f}" for codes in (held_out, training, every)), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
