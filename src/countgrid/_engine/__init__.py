"""Private machinery shared by several model families: the EM loop monitor, fitting one
model per class, and the generative-embedding base (docs/architecture.md).  Families
import it; it imports ``countgrid._utils``, ``countgrid._base`` and
``countgrid.exceptions``, never a family or the front door.
"""
