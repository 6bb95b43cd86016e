/**
 * A mention of the project's own planning documents, which users never see: `SPEC`, `DESIGN`,
 * `spec 4.2`, `DESIGN section 7`, `section 5`. Comments and messages say what the code does instead.
 */
export const SECTION_MENTION = /\b(?:SPEC|DESIGN)\b|\b(?:[Ss]pec|[Dd]esign|[Ss]ection)s?\s+\d/;
