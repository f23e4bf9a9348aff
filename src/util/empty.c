/* Placeholder so an empty module still produces a library. */
typedef int cu_empty_translation_unit;
