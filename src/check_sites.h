/* check_sites.h — check.c's checks of `.apply` sites and of what is left as written (below). */
#ifndef P2S_CHECK_SITES_H
#define P2S_CHECK_SITES_H

#include <stddef.h>
#include <tree_sitter/api.h>

#include "checker.h"

/* P2S110-P2S113: the call's arguments bound to forward's signature, as Python would. */
void p2s_check_site(P2sChecker *ck, P2sApplySite *site);
/* Each PyLayer class left as written by a finding of its own, or by a base of another module
 * (find.c): the note that says so, naming where the errors are. */
void p2s_check_note_as_written(P2sChecker *ck);
/* A class derived from one left as written may inherit what is wrong there: it is left as
 * written too, with the note naming the base. Bases are matched by spelling, so a class of the
 * same name elsewhere in the file counts too (the safe side). Repeated until nothing changes. */
void p2s_check_inherit_as_written(P2sChecker *ck);
/* The first class left as written that the file passes around (an alias, an argument, a
 * container), so that an unresolved `.apply` may be its: SIZE_MAX when there is none. Every
 * identifier spelled like one counts, whatever it is bound to (the safe side). */
size_t p2s_check_escaping(const P2sChecker *ck, TSNode any);
/* A `.apply` the finder could not tie to a class (a parameter, `self.layer_cls`, a name from
 * another module): it goes through the runtime, which decides when it runs. Worth a note. It is
 * left as written when a class left as written may reach it (escaping: p2s_check_escaping). */
void p2s_check_dynamic_site(P2sChecker *ck, P2sApplySite *site, size_t escaping);

#endif
