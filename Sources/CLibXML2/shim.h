// libxml2 for the XML stream parser. Foundation's ICU clashes with libxml2's ICU types
// ('UErrorCode' has different definitions), so ICU support is hidden from Swift here.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
