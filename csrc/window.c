/* Toroidal window sums and window histograms. */
#include <math.h>
#include <stdlib.h>
#include "cg_internal.h"
#include "cg_math.h"

#define REAL float
#define SUF f32
#define LOG cg_log_f32
#include "box_impl.h"
#include "window_impl.h"
#undef REAL
#undef SUF
#undef LOG

#define REAL double
#define SUF f64
#define LOG cg_log_f64
#include "box_impl.h"
#include "window_impl.h"
#undef REAL
#undef SUF
#undef LOG
