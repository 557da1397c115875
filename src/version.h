/* version.h — the tool's version; the generated code and the runtime agree on it. */
#ifndef P2S_VERSION_H
#define P2S_VERSION_H

#define P2S_VERSION "0.1.0"

#endif
