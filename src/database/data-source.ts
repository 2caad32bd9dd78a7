import { DataSource } from 'typeorm';
import { loadEnvironment } from '../config/load-environment.js';
import { dataSourceOptions } from './data-source-options.js';

/**
 * For the TypeORM CLI (`npm run migration:generate|run|revert`): the same
 * options as the service, from the same validated environment.
 */
export default new DataSource(dataSourceOptions(loadEnvironment()));
