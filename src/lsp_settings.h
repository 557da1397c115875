/* lsp_settings.h — the client's settings (initializationOptions, didChangeConfiguration) in
 * the command line's terms, and through settings.h the merged settings of each configuration
 * file: the rules of the documents below it and the configuration of the workspace folders. */
#ifndef P2S_LSP_SETTINGS_H
#define P2S_LSP_SETTINGS_H

#include <cjson/cJSON.h>

#include "lsp_server.h"
#include "settings.h"

/* Reads settings into s->settings: `{"pylayer2static": {...}}` or the inner object itself, with
 * the keys rules, select, ignore, warn (strings or arrays of strings), config (a path), noConfig
 * (a bool). Without a file system no file is read: neither rules files nor a configuration. */
void p2s_lsp_settings_read(P2sLsp *s, const cJSON *settings);
/* The settings for documents and folders in dir (NULL: no directory, e.g. an untitled buffer),
 * cached per configuration file: the one the client names (`config`), none (`noConfig`), else
 * the nearest. A broken configuration is shown once, and the built-in rules and no configuration
 * used. Owned by s's cache, until the settings change. */
const P2sFileSettings *p2s_lsp_settings_for(P2sLsp *s, const char *dir);

#endif
