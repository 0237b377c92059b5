/* trawl — finds source files for build systems, fast and exactly.
 *
 * The umbrella header of libcore: include this one, or the header of the
 * service you use. Services: match (trawl/pattern.h, trawl/patset.h), walk
 * (trawl/walk.h), shared walks (trawl/plan.h) and their cache
 * (trawl/cache.h). Types are TrawlCamelCase, functions trawl_family_verb
 * (docs/library.md, "Names").
 */
#ifndef TRAWL_H
#define TRAWL_H

#include "trawl/export.h"
#include "trawl/version.h"
#include "trawl/pattern.h"
#include "trawl/patset.h"
#include "trawl/walk.h"
#include "trawl/plan.h"
#include "trawl/cache.h"

#endif /* TRAWL_H */
