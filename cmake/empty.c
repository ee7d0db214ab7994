/* Placeholder translation unit so an empty subsystem still forms a library. */
typedef int kc__empty_translation_unit;
