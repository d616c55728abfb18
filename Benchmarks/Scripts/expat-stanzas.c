/* The parsing limit the ingest pipeline is measured against: libexpat alone, with namespace processing (as
 * the XMPP parser uses it), reading a stream file in 64 KiB chunks and counting stanzas (elements at depth 1)
 * with otherwise empty callbacks.
 *
 *   cc -O2 -o expat-stanzas expat-stanzas.c $(pkg-config --cflags --libs expat)
 *   ./expat-stanzas FILE
 */
#include <expat.h>
#include <stdio.h>

static int depth;
static long stanzas;

static void start(void *data, const XML_Char *name, const XML_Char **attributes) {
    (void)data; (void)name; (void)attributes;
    depth++;
}

static void end(void *data, const XML_Char *name) {
    (void)data; (void)name;
    if (--depth == 1) stanzas++;
}

static void text(void *data, const XML_Char *characters, int length) {
    (void)data; (void)characters; (void)length;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s FILE\n", argv[0]); return 64; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 66; }
    XML_Parser parser = XML_ParserCreateNS("UTF-8", '\x01');
    XML_SetElementHandler(parser, start, end);
    XML_SetCharacterDataHandler(parser, text);
    static char buffer[65536];
    size_t count;
    do {
        count = fread(buffer, 1, sizeof buffer, file);
        if (XML_Parse(parser, buffer, (int)count, count == 0) == XML_STATUS_ERROR) {
            fprintf(stderr, "line %lu: %s\n", XML_GetCurrentLineNumber(parser),
                    XML_ErrorString(XML_GetErrorCode(parser)));
            return 65;
        }
    } while (count > 0);
    printf("%ld stanzas\n", stanzas);
    XML_ParserFree(parser);
    fclose(file);
    return 0;
}
