/* find.h — PyLayer classes and their `.apply` sites in one parsed module, with name
 * resolution over Python's scopes (scope.h). Which base classes are PyLayers comes from the
 * rules. The findings' types: findings.h. */
#ifndef P2S_FIND_H
#define P2S_FIND_H

#include <tree_sitter/api.h>

#include "findings.h"
#include "rules.h"
#include "source.h"

/* module may be NULL: a lone file, whose relative imports stay unresolved. */
void p2s_find(const P2sSource *src, TSTree *tree, const P2sRules *rules, const P2sModule *module,
              P2sFindings *out);
void p2s_findings_release(P2sFindings *self);

#endif
