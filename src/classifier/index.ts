export {
  type ClassifierOptions,
  createStatementClassifier,
  type StatementKind,
} from './statement-classifier.js'
export { MYSQL_WRITE_FUNCTIONS, PG_WRITE_FUNCTIONS } from './write-functions.js'
