/* Toroidal window sums and window histograms. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"

#define REAL float
#define SUF f32
#include "box_impl.h"
#include "rowops.h"
#include "window_impl.h"
#undef REAL
#undef SUF

#define REAL double
#define SUF f64
#include "box_impl.h"
#include "rowops.h"
#include "window_impl.h"
#undef REAL
#undef SUF
