"""Information-theoretic kernels on non-negative measures (Martins et al., JMLR 2009) and
the kernel classifier on generative embeddings (Bicego et al., Neurocomputing 2013)."""
from countgrid.kernels._classifier import ITKernelClassifier
from countgrid.kernels._it_kernels import jensen_shannon_kernel, jensen_tsallis_kernel, log_q

__all__ = ["jensen_shannon_kernel", "jensen_tsallis_kernel", "log_q", "ITKernelClassifier"]
