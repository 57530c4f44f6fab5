"""A stand-in for torch, for tests that must not import the real one: ``torch.device``
with a literal "cuda" fails as torch does on a build without CUDA, so autofix's
``cuda-device`` recipe fixes the script in two short runs (nothing is trained)."""


class _Cuda:
    @staticmethod
    def is_available() -> bool:
        return False


cuda = _Cuda()


def device(name: str) -> str:
    if str(name).startswith("cuda"):
        raise AssertionError("Torch not compiled with CUDA enabled")
    return name
