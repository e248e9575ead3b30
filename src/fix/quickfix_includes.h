// QuickFIX's headers, included the way Debian built the library (C++14 units only).
//
// Debian's libquickfix 1.15.1 (amd64) was configured with OpenSSL and
// without HAVE_STD_UNIQUE_PTR (its symbols take std::auto_ptr, e.g.
// DataDictionary::readFromDocument), without MySQL, PostgreSQL or ODBC, and
// with its own atomic_count (ENABLE_BOOST_ATOMIC_COUNT only on other
// architectures). config-all.h carries none of this, so it is spelled out
// here, before any QuickFIX header: a different choice changes class layouts
// or mangled names and breaks the ABI without a compiler error.
#pragma once
#if __cplusplus >= 201703L
#error "QuickFIX's headers need C++14 (dynamic exception specifications): compile this unit with -std=c++14"
#endif
#define HAVE_SSL 1
#undef HAVE_STD_UNIQUE_PTR
#undef ENABLE_BOOST_ATOMIC_COUNT
#include <quickfix/config-all.h>
#include <quickfix/Application.h>
#include <quickfix/FileStore.h>
#include <quickfix/Message.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketAcceptor.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/Values.h>
#include <quickfix/FixFields.h>
